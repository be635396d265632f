//! The GEMM as Inductor hands it to the choices handler, which can differ from the GEMM as
//! logged. Inductor's pad_mm pass pads a misaligned dimension and copies the operand before
//! lowering: SenseVoice's CTC head (addmm 8064x512x25055, the weight transposed) reached the
//! handler on the H100 as 8064x512x25056 with a contiguous weight
//! (`data/inductor_eval_h100_padmm_check_h1451.json`), and 19 of the 1514 GEMMs of the four
//! H100 logs were logged one way and seen the other. The collection records what the handler
//! saw in each extras line's `seen` (`python/ah_inductor/worker.py`); `ah-prune --features seen`
//! trains on it, so that a tree splits on what it will be asked about.

use ah_core::Value;
use serde_json::Value as Json;

/// Which features a GEMM is trained on (`ah-prune --features`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeatureSource {
    /// The log's: the GEMM as the collection wrote it (PyTorch's `mm` log format).
    #[default]
    Logged,
    /// The extras line's `seen`, where it has one: the GEMM as the handler decides it.
    Seen,
}

/// `values` (a logged GEMM's features, in the order of `features`) with the sizes, strides and
/// contiguity of `seen` (an extras line's `seen` object: `m`, `k`, `n`, `batch`, and every
/// input's `strides`, the operands last). `None` when `seen` is missing or incomplete (an error
/// the worker recorded, an older extras line): the logged values stand.
pub fn seen_values(values: &[Value], features: &[String], seen: &Json) -> Option<Vec<Value>> {
    let dim = |key: &str| seen[key].as_i64();
    let (m, k, n, batch) = (dim("m")?, dim("k")?, dim("n")?, dim("batch")?);
    let strides = seen["strides"].as_array()?;
    let [.., mat1, mat2] = strides.as_slice() else {
        return None;
    };
    let (s10, s11) = last_two(mat1)?;
    let (s20, s21) = last_two(mat2)?;
    let mut out = values.to_vec();
    let replaced = [
        ("m", Value::Int(m)),
        ("k", Value::Int(k)),
        ("n", Value::Int(n)),
        ("batch", Value::Int(batch)),
        ("mat1_stride_0", Value::Int(s10)),
        ("mat1_stride_1", Value::Int(s11)),
        ("mat2_stride_0", Value::Int(s20)),
        ("mat2_stride_1", Value::Int(s21)),
        ("mat1_iscontig", Value::Bool(is_contiguous(m, k, s10, s11))),
        ("mat2_iscontig", Value::Bool(is_contiguous(k, n, s20, s21))),
    ];
    for (name, value) in replaced {
        if let Some(i) = features.iter().position(|f| f == name) {
            out[i] = value;
        }
    }
    Some(out)
}

/// A matrix's row and column strides: the last two of an input's (a bmm operand has three).
fn last_two(strides: &Json) -> Option<(i64, i64)> {
    let [.., s0, s1] = strides.as_array()?.as_slice() else {
        return None;
    };
    Some((s0.as_i64()?, s1.as_i64()?))
}

/// PyTorch's `is_contiguous` of a rows x cols matrix (`is_contiguous` in
/// `python/ah_inductor/choices.py`, which computes the handler's feature).
fn is_contiguous(rows: i64, cols: i64, stride_0: i64, stride_1: i64) -> bool {
    (cols == 1 || stride_1 == 1) && (rows == 1 || stride_0 == cols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names() -> Vec<String> {
        "m,k,n,batch,op,mat1_dtype,mat2_dtype,mat1_stride_0,mat1_stride_1,mat2_stride_0,mat2_stride_1,mat1_iscontig,mat2_iscontig,using_tf32"
            .split(',')
            .map(String::from)
            .collect()
    }

    fn row(text: &str) -> Vec<Value> {
        text.split(',').map(Value::parse).collect()
    }

    #[test]
    fn a_padded_gemm_is_trained_as_the_handler_sees_it() {
        // SenseVoice's CTC head as logged, and as the handler saw it on the H100.
        let logged = row("8064,512,25055,1,addmm,torch.bfloat16,torch.bfloat16,512,1,1,512,True,False,not_float_32");
        let seen = json!({"m": 8064, "k": 512, "n": 25056, "batch": 1,
                          "strides": [[1], [512, 1], [25056, 1]]});
        let got = seen_values(&logged, &names(), &seen).unwrap();
        let want = row("8064,512,25056,1,addmm,torch.bfloat16,torch.bfloat16,512,1,25056,1,True,True,not_float_32");
        assert_eq!(got, want);
    }

    #[test]
    fn a_bmm_reads_each_operands_last_two_strides() {
        let logged = row(
            "21,24,21,8192,bmm,torch.bfloat16,torch.bfloat16,24,1,1,24,True,False,not_float_32",
        );
        let seen = json!({"m": 21, "k": 24, "n": 21, "batch": 8192,
                          "strides": [[504, 24, 1], [504, 1, 24]]});
        assert_eq!(seen_values(&logged, &names(), &seen).unwrap(), logged);
    }

    #[test]
    fn an_incomplete_seen_keeps_the_logged_values() {
        let logged =
            row("64,64,64,1,mm,torch.float16,torch.float16,64,1,64,1,True,True,not_float_32");
        for seen in [
            json!(null),
            json!({"op": "mm", "error": "symbolic"}),
            json!({"m": 64, "k": 64, "n": 64, "batch": 1, "strides": [[64, 1]]}),
            json!({"m": 64, "k": 64, "n": 64, "batch": 1, "strides": [[64, 1], [1]]}),
        ] {
            assert_eq!(seen_values(&logged, &names(), &seen), None, "{seen}");
        }
    }
}
