//! ah-train library (being built; see its issue).
