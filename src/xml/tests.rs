//! Validation and generation: the `deftask` forms templates compile to, and the errors
//! (with line and column) of templates that do not validate.

use super::*;
use crate::eval::quote::syntax_to_value;
use crate::value::write_string;

/// Tasks the library "has" for these tests: `page (issue)`, `review` (params unknown).
fn library(name: &str) -> Option<Option<Vec<Param>>> {
    match name {
        "page" => Some(Some(vec![Param {
            name: "issue".into(),
            optional: false,
        }])),
        "review" => Some(None),
        _ => None,
    }
}

fn compile(xml: &str, alias: Option<&str>, only: Option<&[(String, Span)]>) -> Result<Vec<String>> {
    let file = read_str("<xml-test>", xml)?;
    let definitions = definitions(&file, alias, only, &library, super::Unknown::Error(&[]))?;
    Ok(definitions
        .iter()
        .map(|d| write_string(&syntax_to_value(&d.form)))
        .collect())
}

fn one(xml: &str) -> String {
    match compile(xml, None, None) {
        Ok(forms) => forms.join("\n"),
        Err(e) => panic!("{}: {}", e.kind().code(), e.message()),
    }
}

/// The error, its message, and the line and column it points at.
fn failure(xml: &str) -> (Error, usize, usize) {
    let e = compile(xml, None, None).expect_err("should not validate");
    let location = e.to_json()["location"].clone();
    let line = location["line"].as_u64().unwrap_or(0) as usize;
    let column = location["column"].as_u64().unwrap_or(0) as usize;
    (e, line, column)
}

#[test]
fn atomic_task_with_every_element() {
    let xml = r#"<task name="summarize" type="atomic" subtype="standard">
  <description>Summarize a text</description>
  <inputs><input name="text"/><input name="style" default="brief"/></inputs>
  <system>You are terse.</system>
  <instructions>
    Summarize in a {{style}} style: {{text}}
  </instructions>
  <output_format type="json" schema="object"/>
  <model>small-model</model>
  <inherit_context>none</inherit_context>
</task>"#;
    assert_eq!(
        one(xml),
        r#"(deftask summarize (text (style "brief")) :subtype "standard" :description "Summarize a text" :system "You are terse." :prompt "Summarize in a {{style}} style: {{text}}" :model "small-model" :output "json" :schema "object" :inherit-context "none")"#
    );
}

#[test]
fn context_settings_as_attributes_and_json_schema() {
    let xml = r#"<task name="pick" inherit_context="subset" context_keys="user, repo limits">
  <instructions>Pick one</instructions>
  <output_format schema='{"type": "array"}'/>
</task>"#;
    assert_eq!(
        one(xml),
        r#"(deftask pick () :prompt "Pick one" :output "json" :schema {"type" "array"} :inherit-context "subset" :context-keys ("user" "repo" "limits"))"#
    );
    let as_elements = r#"<task name="pick"><inherit_context>subset</inherit_context><context_keys>user</context_keys>
  <instructions>Pick one</instructions><output_format type="text"/></task>"#;
    assert_eq!(
        one(as_elements),
        r#"(deftask pick () :prompt "Pick one" :inherit-context "subset" :context-keys ("user"))"#
    );
}

#[test]
fn the_conformance_template_file() {
    let xml = include_str!("../../tests/scripts/xml/templates/basic.xml");
    let forms = one(xml);
    let lines: Vec<&str> = forms.lines().collect();
    assert_eq!(
        lines[0],
        r#"(deftask greet (who) :description "Greets someone" :prompt "Hello, {{who}}")"#
    );
    assert_eq!(
        lines[2],
        r#"(deftask flow (text) :description "Checks a text, then greets on urgency" (sequential (check :text text) (cond-output (last step_results) ((= output.urgent true) (greet :who "urgent")) (true (greet :who "calm")) (else nil))))"#
    );
}

#[test]
fn sequential_steps_refs_calls_and_conds() {
    let xml = r#"<tasks>
  <task name="classify"><inputs><input name="issue"/><input name="lang" default="en"/><input name="tone" default="plain"/></inputs>
    <instructions>Classify {{issue}}</instructions><output_format type="json"/></task>
  <task name="route"><inputs><input name="label"/><input name="issue"/></inputs><instructions>{{label}}</instructions></task>
  <task name="triage" type="sequential">
    <inputs><input name="issue"/><input name="lang"/></inputs>
    <steps>
      <task ref="classify"/>
      <call template="route"><arg name="label">step_results[0].parsedContent.label</arg><arg name="issue">"literal"</arg></call>
      <call template="route"><arg>(str "a" issue)</arg><arg>issue</arg></call>
      <cond>
        <case test="output.urgent == true &amp;&amp; output.score &gt;= 3"><call template="page"><arg>issue</arg></call></case>
        <case test="(> output.score 3)"><task ref="review"/><task ref="page"/></case>
      </cond>
    </steps>
  </task>
</tasks>"#;
    let forms = one(xml);
    let triage = forms.lines().nth(2).unwrap();
    assert_eq!(
        triage,
        r#"(deftask triage (issue lang) (sequential (classify :issue issue :lang lang) (route :label step_results[0].parsedContent.label :issue "literal") (route (str "a" issue) issue) (cond-output (last step_results) ((and (= output.urgent true) (>= output.score 3)) (page issue)) ((> output.score 3) (review) (page :issue issue)) (else nil))))"#
    );
}

#[test]
fn script_commands_render_their_tags() {
    let xml = r#"<task name="lines" type="script"><inputs><input name="path"/></inputs>
  <command><arg>wc</arg><arg>-l</arg><arg>{{path}}</arg><arg>--label={{ path }}:{{not a tag}}{{}}</arg></command>
  <timeout>2.5</timeout><output_format type="json"/></task>"#;
    assert_eq!(
        one(xml),
        r#"(deftask lines (path) :timeout 2.5 :output "json" :command ("wc" "-l" (str path) (str "--label=" path ":{{not a tag}}{{}}")))"#
    );
}

#[test]
fn reduce_tasks() {
    let xml = r#"<tasks>
  <task name="join2"><inputs><input name="acc"/><input name="item"/></inputs><instructions>{{acc}} {{item}}</instructions></task>
  <task name="join_all" type="reduce"><inputs><input name="items"/></inputs>
    <reduce over="items" initial='""'><task ref="join2"/></reduce></task>
  <task name="count_all" type="reduce"><inputs><input name="doc"/></inputs>
    <reduce over="doc.sections"><task ref="join2"/></reduce></task>
</tasks>"#;
    let forms = one(xml);
    let lines: Vec<&str> = forms.lines().collect();
    assert_eq!(
        lines[1],
        r#"(deftask join_all (items) :type "reduce" (reduce-task join2 "" items))"#
    );
    assert_eq!(
        lines[2],
        r#"(deftask count_all (doc) :type "reduce" (reduce-task join2 nil doc.sections))"#
    );
    let (e, _, _) = failure(
        r#"<tasks><task name="one"><inputs><input name="x"/></inputs><instructions>x</instructions></task>
  <task name="r" type="reduce"><reduce over="xs"><task ref="one"/></reduce></task></tasks>"#,
    );
    assert!(e.message().contains("two arguments"), "{}", e.message());
}

#[test]
fn a_namespace_qualifies_names_and_local_references_only() {
    let xml = r#"<tasks>
  <task name="a"><instructions>A</instructions></task>
  <task name="b" type="sequential"><steps><task ref="a"/><call template="page"><arg>1</arg></call></steps></task>
</tasks>"#;
    let forms = compile(xml, Some("rv"), None).unwrap();
    assert_eq!(forms[0], r#"(deftask rv/a () :prompt "A")"#);
    assert_eq!(
        forms[1],
        r#"(deftask rv/b () (sequential (rv/a) (page 1)))"#
    );
}

#[test]
fn only_selects_tasks_and_what_they_refer_to() {
    let xml = r#"<tasks>
  <task name="a"><instructions>A</instructions></task>
  <task name="b" type="sequential"><steps><task ref="a"/></steps></task>
  <task name="c"><instructions>C</instructions></task>
</tasks>"#;
    let only = [("b".to_owned(), Span::generated())];
    let forms = compile(xml, None, Some(&only)).unwrap();
    assert_eq!(forms.len(), 2);
    assert!(forms[0].starts_with("(deftask a ") && forms[1].starts_with("(deftask b "));
    let missing = [("zzz".to_owned(), Span::generated())];
    let e = compile(xml, None, Some(&missing)).unwrap_err();
    assert!(e.message().contains("no task `zzz`"), "{}", e.message());
}

#[test]
fn errors_name_what_is_wrong_and_where() {
    use crate::error::ErrorKind::{Validation, XmlParse};
    let cases: &[(&str, crate::error::ErrorKind, &str, usize, usize)] = &[
        ("<task name='a'>\n  <instructions>x</instructions>\n</tsk>", XmlParse, "malformed XML", 3, 1),
        ("<task name='a'>\n  <instructions>x &nbsp;</instructions></task>", XmlParse, "unknown entity", 2, 19),
        ("<tasks>\n  <task name='a'><instructions>x</instructions><colour/></task></tasks>", Validation, "unknown element <colour>", 2, 48),
        ("<task name='a' colour='red'><instructions>x</instructions></task>", Validation, "unknown attribute `colour`", 1, 16),
        ("<task name='a'><instructions>x</instructions>\n<output_slot>r</output_slot></task>", Validation, "<output_slot> is not a tasklisp element: a task's result is its value: a later step reads it as step_results[N]", 2, 1),
        ("<task name='a'><instructions>x</instructions><criteria>short</criteria></task>", Validation, "<criteria> is not a tasklisp element: write what the evaluator judges by in its <instructions>", 1, 46),
        ("<task name='a'><instructions>x</instructions><provider>openai</provider></task>", Validation, "<provider> is not a tasklisp element: a template does not choose its provider", 1, 46),
        ("<task name='a' type='sequential'><steps><task ref='b'><input_source>x</input_source></task></steps></task>", Validation, "<input_source> is not a tasklisp element: bind a step's inputs where it is called", 1, 55),
        ("<task>\n<instructions>x</instructions></task>", Validation, "needs a `name` attribute", 1, 1),
        ("<task name='a' type='magic'><instructions>x</instructions></task>", Validation, "`magic` is not a valid type", 1, 22),
        ("<task name='a'/>", Validation, "needs <instructions>", 1, 1),
        ("<task name='a' type='sequential'><instructions>x</instructions></task>", Validation, "belongs to an atomic task", 1, 34),
        ("<task name='two words'><instructions>x</instructions></task>", Validation, "not a valid task name", 1, 13),
        ("<task name='a' inherit_context='most'><instructions>x</instructions></task>", Validation, "not a valid inherit_context", 1, 33),
        ("<task name='a'><instructions>x</instructions><output_format type='json' schema='tree'/></task>", Validation, "`tree` is not a valid schema", 1, 81),
        ("<task name='a' type='script'><command><arg>sleep</arg></command><timeout>soon</timeout></task>", Validation, "not a valid timeout", 1, 74),
        ("<task name='a' type='sequential'><steps><task ref='nowhere'/></steps></task>", Validation, "unknown task `nowhere`", 1, 52),
        ("<task name='a' type='sequential'><steps>\n<call template='page'><arg name='who'>x</arg></call></steps></task>", Validation, "has no input `who`", 2, 34),
        ("<task name='a' type='sequential'><steps>\n<call template='page'><arg>(f x</arg></call></steps></task>", Validation, "invalid expression", 2, 28),
        ("<task name='a' type='sequential'><steps><task ref='page'/>\n<cond><case test='output.x &lt; &lt; 3'><task ref='page'/></case></cond></steps></task>", Validation, "expected a value", 2, 33),
        ("<task name='a' type='sequential'><steps><cond><case test='true'><task ref='page'/></case></cond></steps></task>", Validation, "cannot be the first step", 1, 41),
        ("<tasks><task name='a'><instructions>x</instructions></task>\n<task name='a'><instructions>y</instructions></task></tasks>", Validation, "defined twice", 2, 13),
        ("<task name='a'><inputs><input name='x'/><input name='x'/></inputs><instructions>x</instructions></task>", Validation, "declared twice", 1, 54),
        ("<workflow/>", Validation, "root element", 1, 1),
        ("<task name='a' type='script'><command>wc -l</command></task>", Validation, "holds elements, not text", 1, 39),
        ("<task name='a'><instructions>x</instructions><instructions>y</instructions></task>", Validation, "appears twice", 1, 46),
    ];
    for (xml, kind, words, line, column) in cases {
        let (e, l, c) = failure(xml);
        assert_eq!(e.kind(), *kind, "{xml}: {}", e.message());
        assert!(e.message().contains(words), "{xml}: {}", e.message());
        assert_eq!((l, c), (*line, *column), "{xml}: {}", e.message());
    }
}

#[test]
fn every_deftask_option_has_an_element() {
    let xml = r#"<tasks>
  <task name="ask"><instructions>Q</instructions><timeout>1.5</timeout><retries>2</retries>
    <audits>[(fn (r) [])]</audits><max_turns>3</max_turns></task>
  <task name="run" type="script"><inputs><input name="x"/></inputs><command><arg>cat</arg></command>
    <stdin>(str x "!")</stdin><env>{"A" x}</env><shell>false</shell></task>
</tasks>"#;
    let forms = one(xml);
    let lines: Vec<&str> = forms.lines().collect();
    assert_eq!(
        lines[0],
        r#"(deftask ask () :prompt "Q" :timeout 1.5 :retries 2 :audits ((fn (r) ())) :max-turns 3)"#
    );
    assert_eq!(
        lines[1],
        r#"(deftask run (x) :stdin (str x "!") :env {"A" x} :shell false :command ("cat"))"#
    );
    let (e, _, _) = failure("<task name='a'><instructions>x</instructions><stdin>x</stdin></task>");
    assert!(
        e.message().contains("<stdin> belongs to a script task"),
        "{}",
        e.message()
    );
    let (e, _, _) =
        failure("<task name='a'><instructions>x</instructions><retries>-1</retries></task>");
    assert!(
        e.message().contains("not a valid retries"),
        "{}",
        e.message()
    );
}

#[test]
fn model_options_tools_and_typed_inputs() {
    let xml = r#"<tasks>
  <task name="add" type="script"><inputs><input name="a" type="integer"/><input name="b"/></inputs>
    <command><arg>echo</arg></command></task>
  <task name="ask"><instructions>Q</instructions><tools><tool ref="add"/></tools>
    <model_options><temperature>0</temperature><stop>END</stop><max_tokens>9</max_tokens></model_options></task>
</tasks>"#;
    let forms = one(xml);
    let lines: Vec<&str> = forms.lines().collect();
    assert_eq!(
        lines[0],
        r#"(deftask add (a b) :param-types {"a" "integer"} :command ("echo"))"#
    );
    assert_eq!(
        lines[1],
        r#"(deftask ask () :prompt "Q" :temperature 0 :stop "END" :max-tokens 9 :tools (add))"#
    );
    let cases: &[(&str, &str)] = &[
        (
            "<task name='a' type='script'><command><arg>x</arg></command><model_options/></task>",
            "<model_options> belongs to an atomic task",
        ),
        (
            "<task name='a'><instructions>x</instructions><model_options><colour>1</colour></model_options></task>",
            "unknown element <colour> in <model_options>",
        ),
        (
            "<task name='a'><instructions>x</instructions><temperature>0</temperature></task>",
            "unknown element <temperature>",
        ),
        (
            "<task name='a'><instructions>x</instructions><model_options><seed>1</seed><seed>2</seed></model_options></task>",
            "<seed> appears twice in <model_options>",
        ),
        (
            "<task name='a'><inputs><input name='x' type='int'/></inputs><instructions>x</instructions></task>",
            "`int` is not a valid type",
        ),
        (
            "<task name='a'><instructions>x</instructions><tools><tool ref='page'/><tool ref='page'/></tools></task>",
            "tool `page` is offered twice",
        ),
        (
            "<task name='a'><instructions>x</instructions><tools><tool>page</tool></tools></task>",
            "<tool> takes no text",
        ),
    ];
    for (xml, words) in cases {
        let (e, _, _) = failure(xml);
        assert!(e.message().contains(words), "{xml}: {}", e.message());
    }
}

#[test]
fn inline_tasks_code_steps_aliases_and_loops() {
    let xml = r#"<tasks>
  <task name="a"><inputs><input name="x"/></inputs><instructions>A {{x}}</instructions></task>
  <task name="s" type="sequential"><inputs><input name="x"/></inputs>
    <context_management><accumulate_data format="full_output"/></context_management>
    <steps>
      <task><description>Ask {{x}}</description></task>
      <code>(define y 1) y</code>
      <task><description>ignored</description><code>(+ y 1)</code></task>
      <cond><case test="output.ok"><task type="atomic" subtype="h"><instructions>H</instructions></task></case></cond>
      <task ref="later"/>
    </steps></task>
  <task name="r" type="reduce"><inputs><input name="xs"/></inputs>
    <reduce over="xs"><task><inputs><input name="acc"/><input name="item"/></inputs><instructions>{{acc}}{{item}}</instructions></task></reduce></task>
  <task name="b" ref="a"/>
  <task name="l" type="director_evaluator_loop"><inputs><input name="x"/></inputs>
    <loop director="a" evaluator="judge" max_iterations="2" input="x"/></task>
</tasks>"#;
    let file = read_str("<xml-test>", xml).unwrap();
    let forms: Vec<String> = definitions(&file, None, None, &library, Unknown::AtCallTime)
        .unwrap()
        .iter()
        .map(|d| write_string(&syntax_to_value(&d.form)))
        .collect();
    let expected = [
        r#"(deftask a (x) :prompt "A {{x}}")"#,
        r#"(deftask s/step-0 () :description "Ask {{x}}" :prompt "Ask {{x}}")"#,
        r#"(deftask s/step-1 () :subtype "h" :prompt "H")"#,
        r#"(deftask s (x) (sequential :accumulate "full_output" (s/step-0) (begin (define y 1) y) (begin (+ y 1)) (cond-output (last step_results) (output.ok (s/step-1)) (else nil)) (call-task "later" {"x" x})))"#,
        r#"(deftask r/step-0 (acc item) :prompt "{{acc}}{{item}}")"#,
        r#"(deftask r (xs) :type "reduce" (reduce-task r/step-0 nil xs))"#,
        r#"(deftask b (x) :description "another name for a" (call-task "a" {"x" x}))"#,
        r#"(deftask l (x) :type "director_evaluator_loop" (director-evaluator-loop :director a :evaluator judge :max-iterations 2 :input x))"#,
    ];
    let mut sorted = forms.clone();
    sorted.sort();
    let mut wanted: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    wanted.sort();
    assert_eq!(sorted, wanted, "{forms:#?}");
    // checking strictly, a task no file defines is an error
    let Err(e) = definitions(&file, None, None, &library, Unknown::Error(&[])) else {
        panic!("a task no file defines is an error when checking");
    };
    assert!(
        e.message().contains("unknown task `later`"),
        "{}",
        e.message()
    );
    let (e, _, _) = failure("<task name='a' type='atomic'><context_management><accumulate_data>true</accumulate_data></context_management><instructions>x</instructions></task>");
    assert!(
        e.message().contains("for sequential tasks"),
        "{}",
        e.message()
    );
}

#[test]
fn strict_json_output() {
    let xml = r#"<task name="exact"><instructions>Answer</instructions>
  <output_format type="json" strict="true"/></task>"#;
    assert_eq!(
        one(xml),
        r#"(deftask exact () :prompt "Answer" :output "json" :strict-json true)"#
    );
}

/// The forms of `xml` read from a file called `name`.
fn forms_of_file(name: &str, xml: &str) -> Result<Vec<String>> {
    let dir = tempfile::tempdir().map_err(|e| Error::eval(e.to_string()))?;
    let path = dir.path().join(name);
    std::fs::write(&path, xml).map_err(|e| Error::eval(e.to_string()))?;
    let file = read_file(&path, 1 << 20)?;
    let definitions = definitions(&file, None, None, &library, super::Unknown::AtCallTime)?;
    Ok(definitions
        .iter()
        .map(|d| write_string(&syntax_to_value(&d.form)))
        .collect())
}

#[test]
fn a_root_task_without_a_name_is_named_after_its_file() {
    let forms = forms_of_file(
        "get_data.xml",
        "<task><instructions>Get data</instructions></task>",
    )
    .unwrap();
    assert_eq!(forms, [r#"(deftask get_data () :prompt "Get data")"#]);
    let alias = forms_of_file("write.xml", r#"<task ref="page"/>"#).unwrap();
    assert!(
        alias[0].starts_with("(deftask write (issue)"),
        "{}",
        alias[0]
    );
    let e = forms_of_file(
        "get.data.xml",
        "<task><instructions>x</instructions></task>",
    )
    .unwrap_err();
    assert_eq!(
        e.message(),
        "this <task> has no name, so it takes the file's, but `get.data` is not a valid task name (it must be a plain symbol): give it name=\"…\""
    );
    // In a <tasks> file every task is named.
    let e = forms_of_file(
        "many.xml",
        "<tasks><task><instructions>x</instructions></task></tasks>",
    )
    .unwrap_err();
    assert!(e.message().contains("name"), "{}", e.message());
}

#[test]
fn a_root_cond_is_a_task_of_one_input_named_after_its_file() {
    let xml = r#"<cond>
  <case test="output.ok == true"><task ref="page"/></case>
  <case test="output.n > 1"><task><description>Many</description></task></case>
</cond>"#;
    let forms = forms_of_file("route.xml", xml).unwrap();
    assert_eq!(
        forms,
        [
            r#"(deftask route/step-0 () :description "Many" :prompt "Many")"#,
            r#"(deftask route (result) (cond-output result ((= output.ok true) (page :issue issue)) ((> output.n 1) (route/step-0)) (else nil)))"#,
        ]
    );
    let e = forms_of_file("route.xml", "<cond/>").unwrap_err();
    assert!(
        e.message().contains("<cond> needs at least one"),
        "{}",
        e.message()
    );
}

#[test]
fn fresh_context_may_be_enabled_or_disabled() {
    let task = |value: &str| {
        format!("<task name='t'><instructions>x</instructions><context_management><fresh_context>{value}</fresh_context></context_management></task>")
    };
    assert!(one(&task("enabled")).ends_with(":fresh-context true)"));
    assert!(one(&task("disabled")).ends_with(":fresh-context false)"));
    let (e, _, _) = failure(&task("on"));
    assert_eq!(
        e.message(),
        "`on` is not a valid fresh_context (true or false; enabled or disabled)"
    );
}
