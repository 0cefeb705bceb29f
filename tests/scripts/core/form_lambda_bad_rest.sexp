;; error: SYNTAX_ERROR `.` must be followed by exactly one rest parameter

(fn (a . b c) a)
