//! ah-collect library (being built; see its issue).
