//! Placeholder: filled in by the extras helper.
