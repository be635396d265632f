//! Tests of the `cublaslt_mm` runner that need no GPU: its context columns, input draws, model
//! shapes and choice ids (by rank, renamed logs).

use super::*;
use ah_core::DeviceIdentity;
use rand::SeedableRng;

fn target() -> Target {
    crate::runners::test_target(BackendKind::Cuda, DeviceIdentity::H100)
}

#[test]
fn context_has_pytorchs_mm_columns() {
    let i = MmInput {
        m: 1920,
        k: 1024,
        n: 12288,
        dtype: DType::F16,
        trans_a: false,
        trans_b: false,
        source: ShapeSource::Random,
    };
    let c = MmRunner::default().context(&i);
    // The head of PyTorch's public a100_mm.txt.
    assert_eq!(
        c.feature_names_csv(),
        "m,k,n,mat1_dtype,mat2_dtype,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,mat1_iscontig,mat2_iscontig,using_tf32"
    );
    assert_eq!(
        c.feature_values_csv(),
        "1920,1024,12288,torch.float16,torch.float16,1024,1,12288,1,True,True,not_float_32"
    );
    let (num, cat) = c.numerical_and_categorical();
    assert_eq!(
        num,
        [
            "m",
            "k",
            "n",
            "mat1_stride_0",
            "mat1_stride_1",
            "mat2_stride_0",
            "mat2_stride_1"
        ]
    );
    assert_eq!(
        cat,
        [
            "mat1_dtype",
            "mat2_dtype",
            "mat1_iscontig",
            "mat2_iscontig",
            "using_tf32"
        ]
    );
    let t = MmInput {
        dtype: DType::F32,
        trans_a: true,
        trans_b: true,
        ..i
    };
    assert_eq!(
        MmRunner::default().context(&t).feature_values_csv(),
        "1920,1024,12288,torch.float32,torch.float32,1,1920,1,1024,False,False,True"
    );
}

#[test]
fn generator_respects_caps_and_mixes_sources() {
    let r = MmRunner::default();
    let t = target();
    let (mut model, mut tr, mut f32s) = (0, [0usize; 4], 0);
    let n = 3000;
    for s in 0..n {
        let mut rng = SampleRng::seed_from_u64(s);
        let i = r.create_input(&mut rng, &t);
        assert!(i.flops() <= r.max_flops, "{i:?}");
        assert!(i.m >= 1 && i.k >= 1 && i.n >= 1);
        assert!(i.m * i.k < 1 << 31 && i.k * i.n < 1 << 31 && i.m * i.n < 1 << 31);
        if i.source == ShapeSource::Model {
            model += 1;
            assert!(is_model_shape(i.m, i.k, i.n, i.trans_a, i.trans_b), "{i:?}");
        } else {
            tr[usize::from(i.trans_a) + 2 * usize::from(i.trans_b)] += 1;
        }
        f32s += usize::from(i.dtype == DType::F32);
        // Same seed, same input.
        let mut again = SampleRng::seed_from_u64(s);
        assert_eq!(r.create_input(&mut again, &t), i);
    }
    let share = model as f64 / n as f64;
    assert!(share > 0.2 && share < 0.45, "model share {share}");
    for c in tr {
        assert!(c > (n as usize - model) / 6, "transposes {tr:?}");
    }
    assert!(f32s > n as usize / 5, "fp32 {f32s}");
}

#[test]
fn model_shapes_are_recognised() {
    // Llama-2-7B MLP up, forward, 8 x 512 tokens.
    assert!(is_model_shape(4096, 4096, 11008, false, true));
    // Its weight gradient: (11008 x 4096 tokens) @ (4096 tokens x 4096).
    assert!(is_model_shape(11008, 4096, 4096, true, false));
    assert!(!is_model_shape(4096, 4096, 11008, true, true));
    assert!(!is_model_shape(4097, 4096, 11008, false, true));
}

#[test]
fn rank_ids_round_trip() {
    assert_eq!(rank_choice_id(1), EXTERN_MM);
    assert_eq!(rank_choice_id(7), "lt7");
    for r in 1..12 {
        assert_eq!(parse_rank_choice(&rank_choice_id(r)), Some(r));
    }
    assert_eq!(parse_rank_choice("lt1"), None);
    assert_eq!(parse_rank_choice("lt"), None);
    assert_eq!(parse_rank_choice("algo1-tile1"), None);
}

#[test]
fn choices_resolve_by_id_or_rank() {
    let ids = [EXTERN_MM, "algo1-x", "algo2-x", "algo3-x"];
    assert_eq!(choice_index(&ids, EXTERN_MM), Some(0));
    assert_eq!(choice_index(&ids, "algo2-x"), Some(2));
    assert_eq!(choice_index(&ids, "lt2"), Some(2));
    assert_eq!(choice_index(&ids, "lt3"), Some(3));
    assert_eq!(choice_index(&ids, "lt4"), None, "only 3 candidates");
    assert_eq!(choice_index(&ids, "algo9-x"), None);
}

#[test]
fn logs_are_renamed_by_rank_per_sample() {
    let a = "algo1-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0";
    let b = "algo2-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0";
    let c = "algo3-tile1-stages1-splitk1-red0-swz0-cus0-in0-cl0";
    let text = format!(
        "{{\"shared_memory\": 232448, \"device_capa\": [9, 0], \"name\": \"mm\", \"numerical_features\": [\"m\"], \"categorical_features\": []}}\n\
         m,choice,feedback\n\
         8,extern_mm,1.0\n8,{a},1.5\n8,{b},0.5\n8,{c},2.0\n\
         8,extern_mm,1.25\n8,{c},3.0\n8,{a},0.75\n"
    );
    let log = ah_log::Log::from_reader(
        std::path::Path::new("t.txt"),
        text.as_bytes(),
        ah_log::ReadOptions { strict: true },
    )
    .unwrap();
    let lines = rank_log_lines(&log).unwrap();
    assert_eq!(
        &lines[1..],
        [
            "m,choice,feedback",
            "8,extern_mm,1.0",
            "8,lt2,0.5",
            "8,lt3,2.0",
            "8,extern_mm,1.25",
            "8,lt2,0.75"
        ]
    );
    let bad = text.replace("8,extern_mm,1.0\n", "");
    let log = ah_log::Log::from_reader(
        std::path::Path::new("t.txt"),
        bad.as_bytes(),
        ah_log::ReadOptions { strict: true },
    )
    .unwrap();
    let err = rank_log_lines(&log).unwrap_err().to_string();
    assert!(
        err.contains("row 1") && err.contains("expected `extern_mm`"),
        "{err}"
    );
}

#[test]
fn cpu_is_not_supported() {
    assert!(!MmRunner::default().supports(BackendKind::Cpu));
    assert!(MmRunner::default().supports(BackendKind::Cuda));
    assert_eq!(MmRunner::default().choices(), [EXTERN_MM]);
}
