//! The modeled world (issue 4).
