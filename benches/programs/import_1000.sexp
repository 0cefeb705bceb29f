; Benchmark: import 1,000 templates (parse, validate, compile to deftask, register).
;   tasklisp run benches/programs/import_1000.sexp
; prints the milliseconds the import took (run it several times and take the median).
; Three in four templates are atomic; every fourth is sequential, with a <task ref>, a
; <call> and a <cond> referring to earlier ones.

(define (atomic-template i)
  (str "<task name=\"t" i "\" subtype=\"standard\"><description>Task " i "</description>"
       "<inputs><input name=\"text\"/><input name=\"style\" default=\"brief\"/></inputs>"
       "<instructions>Summarize in a {{style}} style: {{text}}</instructions>"
       "<output_format type=\"json\" schema=\"object\"/></task>\n"))

(define (sequential-template i)
  (str "<task name=\"t" i "\" type=\"sequential\"><inputs><input name=\"text\"/></inputs><steps>"
       "<task ref=\"t" (- i 1) "\"/>"
       "<call template=\"t" (- i 2) "\"><arg name=\"text\">step_results[0].content</arg></call>"
       "<cond><case test=\"output.ok == true &amp;&amp; output.n &gt; 2\"><task ref=\"t" (- i 3) "\"/></case></cond>"
       "</steps></task>\n"))

(define n (if (empty? *args*) 1000 (string->number (first *args*))))
(define file (str "/tmp/tasklisp-bench-" n ".xml"))
(write-file file
            (str "<tasks>\n"
                 (string-join (map (fn (i) (if (= (modulo i 4) 3) (sequential-template i) (atomic-template i))) (range n)) "")
                 "</tasks>\n"))
(define timing (time (fn () (import file))))
(println (str (length timing.value) " templates imported in " timing.ms " ms"))
