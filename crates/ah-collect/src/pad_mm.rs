//! pad_mm's own flags: `--shapes` (the input distribution, kept from the log's provenance on
//! resume) and `--catalogue`.

use std::path::Path;
use std::sync::Arc;

use ah_collect::catalogue::Catalogue;
use ah_collect::runners::pad_mm::{PadMmRunner, ShapeDistribution};
use ah_collect::runners::RunnerOptions;
use anyhow::bail;

use crate::cli::{Cli, ShapesArg};
use crate::recorded::recorded_shapes;

/// The pad_mm runner with `--shapes` and `--catalogue`; without `--shapes`, the distribution
/// the log's provenance sidecar records (none: `pytorch`), or `mix` for a new log.
pub(crate) fn pad_mm_runner(
    cli: &Cli,
    options: &RunnerOptions,
    out: &Path,
) -> anyhow::Result<PadMmRunner> {
    let shapes = match cli.shapes {
        Some(s) => s,
        None => recorded_shapes(out)?.unwrap_or(ShapesArg::Mix),
    };
    if shapes.inductor_mixture().is_some() {
        bail!(
            "--shapes {} is inductor_mm's; pad_mm draws pytorch, real or mix",
            shapes.name()
        );
    }
    if shapes == ShapesArg::Pytorch && cli.catalogue.is_some() {
        bail!("--catalogue is used by --shapes real and mix, not pytorch");
    }
    if let (Some(power), false) = (cli.max_dim, shapes == ShapesArg::Pytorch) {
        let dim = 1u64 << power;
        bail!(
            "--max-dim {dim} bounds PyTorch's generator only, but the inputs are drawn with --shapes {}{}, whose real-model dimensions it cannot bound\nhint: add --shapes pytorch for inputs of at most {dim} in every dimension",
            shapes.name(),
            if cli.shapes.is_none() { " (the default)" } else { "" }
        );
    }
    let catalogue = || -> anyhow::Result<Arc<Catalogue>> {
        Ok(Arc::new(match &cli.catalogue {
            Some(p) => Catalogue::from_file(p)?,
            None => Catalogue::builtin()?,
        }))
    };
    let mut r = PadMmRunner::default();
    if let Some(p) = options.max_power2 {
        r.max_power2_gpu = p;
        r.max_power2_cpu = p;
    }
    Ok(r.with_shapes(match shapes {
        ShapesArg::Pytorch => ShapeDistribution::Pytorch,
        ShapesArg::Real => ShapeDistribution::Real(catalogue()?),
        // inductor_mm's mixtures were refused above.
        ShapesArg::Mix
        | ShapesArg::Decode
        | ShapesArg::Attention
        | ShapesArg::Tiny
        | ShapesArg::Tokens
        | ShapesArg::Windows
        | ShapesArg::Heads
        | ShapesArg::Pool
        | ShapesArg::Adapters
        | ShapesArg::Hires
        | ShapesArg::Serving
        | ShapesArg::Routers => ShapeDistribution::Mix(catalogue()?),
    }))
}
