//! ah-codegen library (being built; see its issue).
