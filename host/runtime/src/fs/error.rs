//! Why a file operation of a component failed.

/// Why a file operation failed, as the `files` interface reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// Nothing at that path.
    NotFound,
    /// Outside every granted root, or leaving them through a link.
    Denied,
    /// Over a size or count limit.
    TooLarge,
    /// The run's [`ReadBudget`](super::ReadBudget) is spent: the run is to be stopped.
    OverBudget(BudgetKind),
    /// Any other failure.
    Io(String),
}

/// Which part of a [`ReadBudget`](super::ReadBudget) ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetKind {
    /// Bytes of file contents, names and link targets.
    Bytes,
    /// Entries: files read, names listed, paths matched.
    Entries,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::NotFound => f.write_str("not found"),
            FileError::Denied => f.write_str("denied: outside the granted roots"),
            FileError::TooLarge => f.write_str("too large"),
            FileError::OverBudget(BudgetKind::Bytes) => {
                f.write_str("the run's read budget is spent")
            }
            FileError::OverBudget(BudgetKind::Entries) => {
                f.write_str("the run's entry budget is spent")
            }
            FileError::Io(s) => f.write_str(s),
        }
    }
}
