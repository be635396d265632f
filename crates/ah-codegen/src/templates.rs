//! The tera templates, compiled into the binary.

use std::sync::OnceLock;

use crate::error::CodegenError;

const TEMPLATES: &[(&str, &str)] = &[
    (
        "python_decision.py",
        include_str!("../templates/python_decision.py.tera"),
    ),
    (
        "python_regression.py",
        include_str!("../templates/python_regression.py.tera"),
    ),
    (
        "rust_module.rs",
        include_str!("../templates/rust_module.rs.tera"),
    ),
    ("rust_lib.rs", include_str!("../templates/rust_lib.rs.tera")),
    ("graph.dot", include_str!("../templates/graph.dot.tera")),
];

fn tera() -> &'static Result<tera::Tera, String> {
    static TERA: OnceLock<Result<tera::Tera, String>> = OnceLock::new();
    TERA.get_or_init(|| {
        let mut t = tera::Tera::default();
        t.autoescape_on(vec![]);
        t.add_raw_templates(TEMPLATES.iter().copied())
            .map_err(|e| {
                let mut s = e.to_string();
                let mut src = std::error::Error::source(&e);
                while let Some(x) = src {
                    s.push_str(": ");
                    s.push_str(&x.to_string());
                    src = x.source();
                }
                s
            })?;
        Ok(t)
    })
}

/// Renders template `name` with `ctx`.
pub fn render(name: &str, ctx: &tera::Context) -> Result<String, CodegenError> {
    let t = tera().as_ref().map_err(|m| CodegenError::Template {
        template: name.to_string(),
        message: m.clone(),
    })?;
    t.render(name, ctx)
        .map_err(|e| CodegenError::template(name, &e))
}
