//! The reasons of a `TASK_FAILURE`, as one enum: Rust code names a reason by its variant,
//! so a misspelt reason does not compile, and the map form (`try`/`catch`,
//! `--error-format json`) keeps the snake_case strings the seeds use.

use std::fmt;

macro_rules! reasons {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// Why a task failed. `Other` carries a reason a program gave to `fail` that
        /// tasklisp itself never raises.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Reason {
            $($(#[$doc])* $variant,)*
            Other(Box<str>),
        }

        impl Reason {
            /// The reason as it appears in an error map.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Reason::$variant => $text,)*
                    Reason::Other(text) => text,
                }
            }

            /// The reason a string names: a known one by its variant, any other as `Other`.
            pub fn parse(text: &str) -> Reason {
                match text {
                    $($text => Reason::$variant,)*
                    other => Reason::Other(other.into()),
                }
            }
        }
    };
}

reasons! {
    /// Context (files, memory, a retrieval step) could not be gathered.
    ContextRetrievalFailure = "context_retrieval_failure",
    /// Context was gathered but nothing matched the query.
    ContextMatchingFailure = "context_matching_failure",
    /// A context request or an associative-matching answer does not have its shape.
    ContextParsingFailure = "context_parsing_failure",
    /// The output could not be parsed, or did not match the declared schema.
    OutputFormatFailure = "output_format_failure",
    /// A script, provider call or evaluation ran past its time limit.
    ExecutionTimeout = "execution_timeout",
    /// Interrupted (Ctrl-C) or cancelled.
    ExecutionHalted = "execution_halted",
    /// A step of a `sequential` failed.
    SubtaskFailure = "subtask_failure",
    /// The arguments or rendered inputs of a task are wrong.
    InputValidationFailure = "input_validation_failure",
    /// A referenced task or template is not registered.
    TemplateNotFound = "template_not_found",
    /// A program run by a script task failed.
    ToolExecutionError = "tool_execution_error",
    /// The provider (model server, command, cassette) failed.
    LlmError = "llm_error",
    /// Something went wrong that no other reason describes (a bug or a lost worker).
    UnexpectedError = "unexpected_error",
    /// An action was refused by a permission setting.
    PermissionDenied = "permission_denied",
    /// An `expect…` check failed outside a running test (an `EVAL_ERROR`).
    ExpectationFailed = "expectation_failed",
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_reasons_round_trip_through_their_strings() {
        for reason in [
            Reason::OutputFormatFailure,
            Reason::LlmError,
            Reason::PermissionDenied,
            Reason::ContextMatchingFailure,
        ] {
            assert_eq!(Reason::parse(reason.as_str()), reason);
        }
        assert_eq!(
            Reason::OutputFormatFailure.as_str(),
            "output_format_failure"
        );
    }

    #[test]
    fn an_unknown_reason_is_kept_as_given() {
        let reason = Reason::parse("my_own_reason");
        assert_eq!(reason, Reason::Other("my_own_reason".into()));
        assert_eq!(reason.as_str(), "my_own_reason");
    }
}
