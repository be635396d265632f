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

/// Template `name`, parsed alone on its first use (`None`: no such template). A run without
/// code generation renders only the Graphviz file: parsing every template for it (pest) cost
/// about 25 M instructions, more than the rest of writing the outputs.
fn tera(name: &str) -> Option<&'static Result<tera::Tera, String>> {
    static PARSED: [OnceLock<Result<tera::Tera, String>>; TEMPLATES.len()] =
        [const { OnceLock::new() }; TEMPLATES.len()];
    let i = TEMPLATES.iter().position(|(n, _)| *n == name)?;
    Some(PARSED[i].get_or_init(|| parse(TEMPLATES[i])))
}

/// A tera instance holding one template.
fn parse(template: (&str, &str)) -> Result<tera::Tera, String> {
    let mut t = tera::Tera::default();
    t.autoescape_on(vec![]);
    t.add_raw_templates([template]).map_err(|e| {
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
}

/// Renders template `name` with `ctx`.
pub fn render(name: &str, ctx: &tera::Context) -> Result<String, CodegenError> {
    let Some(parsed) = tera(name) else {
        // tera's own error for a template it does not hold.
        return tera::Tera::default()
            .render(name, ctx)
            .map_err(|e| CodegenError::template(name, &e));
    };
    let t = parsed.as_ref().map_err(|m| CodegenError::Template {
        template: name.to_string(),
        message: m.clone(),
    })?;
    t.render(name, ctx)
        .map_err(|e| CodegenError::template(name, &e))
}
