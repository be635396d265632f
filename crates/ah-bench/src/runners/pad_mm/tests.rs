use super::*;
use rand::SeedableRng;

use crate::dtype::DType;
use crate::runners::test_target as target;

#[test]
fn padded_length_is_pytorchs() {
    assert_eq!(padded_length(1, 8), 0);
    assert_eq!(padded_length(16, 8), 0);
    assert_eq!(padded_length(17, 8), 7);
    assert_eq!(padded_length(2174, 8), 2);
    assert_eq!(padded_length(5, 0), 0);
    assert_eq!(padded_length(41523, 8), 5);
}

#[test]
fn context_matches_pytorch_columns_and_values() {
    // The first row of PyTorch's public pad_mm_a100 log:
    // 29088,41523,5535,1,29088,5535,1,0,5,1,8,8,torch.bfloat16,torch.bfloat16,False,True,not_float_32
    let i = PadMmInput {
        m: 29088,
        k: 41523,
        n: 5535,
        dtype: DType::BF16,
        allow_tf32: true,
        transpose_left: true,
        transpose_right: false,
        prepadded_left: false,
        prepadded_right: true,
        fuse_mat1_pad: false,
    };
    let c = PadMmRunner::default().context(&i);
    assert_eq!(
        c.feature_names_csv(),
        "m,k,n,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,m_padded_length,k_padded_length,n_padded_length,mat1_align_size,mat2_align_size,mat1_dtype,mat2_dtype,prepadded_mat1,prepadded_mat2,using_tf32"
    );
    assert_eq!(
        c.feature_values_csv(),
        "29088,41523,5535,1,29088,5535,1,0,5,1,8,8,torch.bfloat16,torch.bfloat16,False,True,not_float_32"
    );
    let (num, cat) = c.numerical_and_categorical();
    assert_eq!(num.len(), 12);
    assert_eq!(
        cat,
        [
            "mat1_dtype",
            "mat2_dtype",
            "prepadded_mat1",
            "prepadded_mat2",
            "using_tf32"
        ]
    );
    let f32_input = PadMmInput {
        dtype: DType::F32,
        allow_tf32: false,
        ..i
    };
    assert_eq!(
        PadMmRunner::default().context(&f32_input).get("using_tf32"),
        Some(&false.into())
    );
}

#[test]
fn transposed_operands_are_never_prepadded() {
    let i = PadMmInput {
        m: 100,
        k: 30,
        n: 7,
        dtype: DType::F16,
        allow_tf32: true,
        transpose_left: true,
        transpose_right: true,
        prepadded_left: true,
        prepadded_right: true,
        fuse_mat1_pad: false,
    };
    assert!(!i.mat1_pre_padded() && !i.mat2_pre_padded());
    let j = PadMmInput {
        transpose_left: false,
        transpose_right: false,
        ..i
    };
    assert!(j.mat1_pre_padded() && j.mat2_pre_padded());
    assert!(is_contiguous(1, 5, 1, 1) && is_contiguous(5, 1, 1, 5) && !is_contiguous(5, 3, 1, 5));
}

#[test]
fn generator_follows_pytorchs_distribution() {
    let r = PadMmRunner::default();
    let t = target(BackendKind::Cuda, DeviceIdentity::H100);
    let mut counts = std::collections::BTreeMap::new();
    let n = 4000;
    for s in 0..n {
        let mut rng = SampleRng::seed_from_u64(s);
        let i = r.create_input(&mut rng, &t);
        let a = i.dtype.align_size();
        assert!(
            !(i.m % a == 0 && i.k % a == 0 && i.n % a == 0),
            "all aligned: {i:?}"
        );
        assert!((1..=65536).contains(&i.m) && (1..=65536).contains(&i.k));
        assert!(i.dtype.itemsize() * (i.m * i.k + i.k * i.n + i.m * i.n) < (80usize << 30) / 4);
        *counts.entry(format!("{:?}", i.dtype)).or_insert(0) += 1;
        *counts
            .entry(format!(
                "t{}{}",
                i.transpose_left as u8, i.transpose_right as u8
            ))
            .or_insert(0) += 1;
        if i.prepadded_left {
            *counts.entry("pl".to_string()).or_insert(0) += 1;
        }
        if i.dtype == DType::F32 && i.allow_tf32 {
            *counts.entry("tf32".to_string()).or_insert(0) += 1;
        }
    }
    let frac = |k: &str| f64::from(counts.get(k).copied().unwrap_or(0)) / n as f64;
    assert!((frac("F16") - 1.0 / 3.0).abs() < 0.04, "{counts:?}");
    assert!((frac("t11") - 0.05).abs() < 0.02, "{counts:?}");
    assert!((frac("t00") - 0.95 / 3.0).abs() < 0.04, "{counts:?}");
    assert!((frac("pl") - 0.2).abs() < 0.03, "{counts:?}");
    assert!(
        (frac("tf32") / frac("F32") - 0.2).abs() < 0.05,
        "{counts:?}"
    );
}

#[test]
fn precondition_is_pytorchs() {
    assert!(!precondition(DeviceIdentity::H100, 767, 1000, 1000));
    assert!(precondition(DeviceIdentity::H100, 768, 768, 769));
    assert!(!precondition(DeviceIdentity::A100, 511, 600, 600));
    assert!(precondition(DeviceIdentity::NONE, 3, 5, 7));
}

#[test]
fn write_pad_rect_follows_negative_zero_slicing() {
    assert_eq!(write_pad_rect(10, 8, 2, 3), (8, 5, 2, 3));
    assert_eq!(write_pad_rect(10, 8, 0, 3), (0, 5, 10, 3));
    assert_eq!(write_pad_rect(10, 8, 2, 0), (8, 0, 2, 8));
}

#[test]
fn cpu_pad_and_orig_agree_for_every_layout() {
    let r = PadMmRunner::default();
    for (tl, tr, pl, pr) in [
        (false, false, false, false),
        (true, false, false, true),
        (false, true, true, false),
        (true, true, false, false),
        (false, false, true, true),
    ] {
        let i = PadMmInput {
            m: 13,
            k: 10,
            n: 7,
            dtype: DType::F32,
            allow_tf32: false,
            transpose_left: tl,
            transpose_right: tr,
            prepadded_left: pl,
            prepadded_right: pr,
            fuse_mat1_pad: false,
        };
        let mut p = prepare_cpu(&i).unwrap();
        cpu_orig(&i, &mut p);
        // Dirty the padded buffers' padding to prove the pad path zeroes it.
        if let Some(ap) = p.a_pad.as_mut() {
            if !i.mat1_pre_padded() {
                ap.fill(7.0);
            }
        }
        cpu_pad(&i, &mut p);
        let s = shapes(&i);
        let (a0, a1) = i.mat1_strides();
        let (b0, b1) = i.mat2_strides();
        for row in 0..i.m {
            for col in 0..i.n {
                let want: f32 = (0..i.k)
                    .map(|t| p.a[row * a0 + t * a1] * p.b[t * b0 + col * b1])
                    .sum();
                assert!((p.c[row * i.n + col] - want).abs() < 1e-4, "orig {i:?}");
                assert!((p.c_pad[row * s.np + col] - want).abs() < 1e-4, "pad {i:?}");
            }
        }
        assert_eq!(r.context(&i).len(), 17);
    }
}
