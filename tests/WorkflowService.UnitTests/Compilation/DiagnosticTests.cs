using WorkflowService.Engine.Definitions;
using static WorkflowService.UnitTests.Compilation.CompilerFixture;

namespace WorkflowService.UnitTests.Compilation;

/// <summary>Every problem the compiler reports outside parallel steps and cancel paths, each with its JSON path and message.</summary>
public sealed class DiagnosticTests
{
    private const string Done = """{ "id": "done", "type": "complete" }""";
    private const string TypeList = "type must be one of: assign, waitForSignal, delay, decision, humanTask, complete, fail, emit, http, subWorkflow, parallel, forEach";
    private const string NotADuration = "is not an ISO 8601 duration from PT0S to P36500D, such as PT30S";

    // Assigning __proto__ on the JavaScript object that holds the variables would replace its prototype, not store a value.
    private const string ProtoReserved = "'__proto__' is reserved and cannot be assigned";

    // ---- reading the document ----

    [Theory]
    [InlineData("""{ "id": "e", "type": "emit", "event": "'instance.completed'" }""", "$.steps[0].event",
        "'instance.' names the service's own events; choose another name for a custom event")]
    [InlineData("""{ "id": "e", "type": "emit", "event": "'9 lives'" }""", "$.steps[0].event",
        "an event type starts with a letter and has only letters, digits, '.', '-' and '_'")]
    [InlineData("""{ "id": "e", "type": "emit", "data": "1" }""", "$.steps[0].event", "event is required for the step type emit")]
    public void An_emit_step_whose_event_type_cannot_be_sent_is_refused(string step, string path, string message)
    {
        Refused(Steps(step, Done), (path, message));
    }

    [Fact]
    public void An_emit_step_with_a_computed_event_type_is_checked_when_it_runs()
    {
        Valid(Steps("""{ "id": "e", "type": "emit", "event": "'claim.' + vars.outcome", "data": "({ a: 1 })" }""", Done));
    }

    [Fact]
    public void A_document_that_is_JSON_null_is_not_a_definition()
    {
        Refused("null", ("$", "the definition must be a JSON object"));
    }

    private const string AStep = "a step: a JSON object with an id, a type (one of: assign, waitForSignal, delay, decision, humanTask, complete, "
        + "fail, emit, http, subWorkflow, parallel, forEach) and the fields of that type";

    private const string StepFields = "id, type, description, next, set, signal, timeout, onTimeout, output, duration, branches, otherwise, "
        + "title, assignee, role, data, result, reason, event, method, url, body, headers, retries, definition, version, input, items, steps, mode, maxConcurrency, completion, toleratedFailures, onError, errorOutput";

    [Theory]
    [InlineData("""[ 1 ]""", "$", "expected a JSON object with the fields name, description, variables, steps, onCancel, searchAttributes")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "a", "type": "complete", "result": 42 } ] }""", "$.steps[0].result", "expected a string")]
    [InlineData("""{ "name": "t", "variables": [], "steps": [] }""", "$.variables", "expected a JSON object")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "a", "type": "http", "retries": "two" } ] }""", "$.steps[0].retries",
        "expected a whole number from -2147483648 to 2147483647")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "a", "type": "assign", "set": { "x": 1 } } ] }""", "$.steps[0].set.x", "expected a string")]
    [InlineData("""{ "name": "t", "steps": { "id": "a" } }""", "$.steps", "expected a JSON array whose every item is " + AStep)]
    [InlineData("""{ "name": "t", "steps": [ "a" ] }""", "$.steps[0]", "expected " + AStep)]
    [InlineData("""{ "name": "t", "steps": [ { "id": "d", "type": "decision", "branches": [ 1 ] } ] }""", "$.steps[0].branches[0]",
        "expected a branch: a JSON object with when and next (of a decision step) or name and steps (of a parallel step)")]
    public void A_value_of_the_wrong_JSON_type_stops_reading_with_one_problem_that_says_what_was_expected(string json, string path, string message)
    {
        Refused(json, (path, message));
    }

    [Theory]
    [InlineData("""{ "name": "t", "steps": [ { "id": "a", "type": "decision", "otherwize": "b" } ] }""", "$.steps[0].otherwize",
        "unknown field 'otherwize' at $.steps[0]; a decision step takes: id, type, description, branches, otherwise, onError, errorOutput")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "a", "type": "assign", "set": { "n": "1" } }, { "id": "b", "type": "fail", "error": "'x'" } ] }""",
        "$.steps[1].error", "unknown field 'error' at $.steps[1]; a fail step takes: id, type, description, onError, errorOutput, reason")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "p", "type": "parallel", "branches": [ { "name": "b", "steps": [ { "id": "w", "type": "delay", "duraton": "PT1S" } ] } ] } ] }""",
        "$.steps[0].branches[0].steps[0].duraton", "unknown field 'duraton' at $.steps[0].branches[0].steps[0]; a delay step takes: id, type, description, next, duration")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "a", "rason": "'x'", "type": "fail" } ] }""", "$.steps[0].rason",
        "unknown field 'rason' at $.steps[0]; a fail step takes: id, type, description, onError, errorOutput, reason")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "a", "type": "sleep", "otherwize": "b" } ] }""", "$.steps[0].otherwize",
        "unknown field 'otherwize' at $.steps[0]; expected one of: " + StepFields)]
    [InlineData("""{ "name": "t", "stepz": [] }""", "$.stepz", "unknown field 'stepz' at $; expected one of: name, description, variables, steps, onCancel, searchAttributes")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "p", "type": "parallel", "branches": [ { "name": "b", "step": [] } ] } ] }""",
        "$.steps[0].branches[0].step", "unknown field 'step' at $.steps[0].branches[0]; a branch of a parallel step takes: name, steps")]
    [InlineData("""{ "name": "t", "steps": [ { "id": "d", "type": "decision", "branches": [ { "when": "true", "goto": "e" } ] } ] }""",
        "$.steps[0].branches[0].goto", "unknown field 'goto' at $.steps[0].branches[0]; a branch of a decision step takes: when, next")]
    public void An_unknown_field_is_named_with_where_it_is_and_the_fields_that_object_or_step_type_has(string json, string path, string message)
    {
        Refused(json, (path, message));
    }

    [Fact]
    public void Text_that_is_not_JSON_is_reported_as_a_parse_error_instead_of_throwing()
    {
        var diagnostics = new List<Diagnostic>();

        Assert.Null(DefinitionCompiler.Parse("""{ "name": "t", "steps": [ """, diagnostics));
        Assert.StartsWith("invalid JSON: ", Assert.Single(diagnostics).Message, StringComparison.Ordinal);
    }

    // ---- top level ----

    [Theory]
    [InlineData("""{ "steps": [ { "id": "done", "type": "complete" } ] }""")]
    [InlineData("""{ "name": "", "steps": [ { "id": "done", "type": "complete" } ] }""")]
    [InlineData("""{ "name": "-starts-with-dash", "steps": [ { "id": "done", "type": "complete" } ] }""")]
    [InlineData("""{ "name": "has space", "steps": [ { "id": "done", "type": "complete" } ] }""")]
    public void A_definition_needs_a_valid_name(string json)
    {
        Refused(json, ("$.name", "name is required: 1-100 characters, letters, digits, '.', '_' or '-', starting with a letter or digit"));
    }

    [Fact]
    public void A_name_is_at_most_100_characters()
    {
        Valid($$"""{ "name": "{{new string('n', 100)}}", "steps": [ {{Done}} ] }""");
        Refused($$"""{ "name": "{{new string('n', 101)}}", "steps": [ {{Done}} ] }""",
            ("$.name", "name is required: 1-100 characters, letters, digits, '.', '_' or '-', starting with a letter or digit"));
    }

    [Fact]
    public void Every_invalid_variable_name_is_reported_with_its_key()
    {
        Refused($$"""{ "name": "t", "variables": { "ok": 1, "1x": 2, "a-b": 3, "_$fine": 4 }, "steps": [ {{Done}} ] }""",
            ("$.variables.1x", "'1x' is not a valid variable name"),
            ("$.variables.a-b", "'a-b' is not a valid variable name"));
    }

    [Fact]
    public void Initial_variables_may_have_the_names_of_object_members_including_proto()
    {
        // JSON parsing makes each key an ordinary property of vars, __proto__ too (it is kept: see StepFlowTests).
        Valid($$"""{ "name": "t", "variables": { "__proto__": { "x": 1 }, "constructor": 2, "prototype": 3 }, "steps": [ {{Done}} ] }""");
    }

    [Theory]
    [InlineData("""{ "name": "t" }""")]
    [InlineData("""{ "name": "t", "steps": [] }""")]
    public void A_definition_needs_at_least_one_step(string json)
    {
        Refused(json, ("$.steps", "a definition needs at least one step"));
    }

    [Fact]
    public void A_null_step_is_reported_as_not_an_object_and_as_missing_its_id()
    {
        Refused(Steps("null", Done),
            ("$.steps[0].id", "id is required: letters, digits, '.', '_' or '-'"),
            ("$.steps[0]", "a step must be an object"));
    }

    [Theory]
    [InlineData("""{ "type": "complete" }""")]
    [InlineData("""{ "id": "", "type": "complete" }""")]
    [InlineData("""{ "id": ".dot", "type": "complete" }""")]
    [InlineData("""{ "id": "a/b", "type": "complete" }""")]
    public void A_step_needs_a_valid_id(string step)
    {
        Refused(Steps(Done, step), ("$.steps[1].id", "id is required: letters, digits, '.', '_' or '-'"));
    }

    [Fact]
    public void A_duplicate_id_names_where_it_was_first_used()
    {
        Refused(Steps(
                """{ "id": "a", "type": "assign", "set": { "x": "1" } }""",
                """{ "id": "a", "type": "complete" }""",
                """{ "id": "a", "type": "fail", "reason": "'x'" }"""),
            ("$.steps[1].id", "duplicate step id 'a' (first used at $.steps[0])"),
            ("$.steps[2].id", "duplicate step id 'a' (first used at $.steps[0])"));
    }

    [Theory]
    [InlineData("""{ "id": "a" }""")]
    [InlineData("""{ "id": "a", "type": "Assign" }""")]
    [InlineData("""{ "id": "a", "type": "script" }""")]
    public void A_missing_or_unknown_type_lists_the_types_and_leaves_the_other_fields_unchecked(string step)
    {
        var withForeignFields = step.TrimEnd('}') + """, "signal": "$bad", "next": "nowhere" }""";

        Refused(Steps(withForeignFields, Done), ("$.steps[0].type", TypeList));
    }

    // ---- next ----

    [Fact]
    public void Next_must_name_a_step()
    {
        Refused(Steps("""{ "id": "a", "type": "assign", "set": { "x": "1" }, "next": "nowhere" }""", Done),
            ("$.steps[0].next", "no step has the id 'nowhere'"));
    }

    [Theory]
    [InlineData("""{ "id": "s", "type": "assign", "set": { "x": "1" } }""", "assign")]
    [InlineData("""{ "id": "s", "type": "waitForSignal", "signal": "go" }""", "waitForSignal")]
    [InlineData("""{ "id": "s", "type": "delay", "duration": "PT1S" }""", "delay")]
    [InlineData("""{ "id": "s", "type": "humanTask", "title": "T" }""", "humanTask")]
    [InlineData("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'" }""", "http")]
    [InlineData("""{ "id": "s", "type": "subWorkflow", "definition": "child" }""", "subWorkflow")]
    [InlineData("""{ "id": "s", "type": "parallel", "branches": [ { "name": "b", "steps": [ { "id": "b1", "type": "assign", "set": { "x": "1" } } ] } ] }""", "parallel")]
    public void A_continuing_step_at_the_end_of_the_definition_needs_next(string step, string type)
    {
        Refused(Steps(Done, step), ("$.steps[1].next", $"a {type} step at the end of the list needs 'next' (or end the list with complete or fail)"));
        Valid(Steps(step.TrimEnd('}') + """, "next": "done" }""", Done));
    }

    // ---- fields of another step type ----

    private static readonly Dictionary<string, string> MinimalSteps = new()
    {
        ["assign"] = """ "set": { "x": "1" } """,
        ["waitForSignal"] = """ "signal": "go" """,
        ["delay"] = """ "duration": "PT1S" """,
        ["decision"] = """ "branches": [ { "when": "true", "next": "done" } ] """,
        ["humanTask"] = """ "title": "T" """,
        ["complete"] = """ "result": "1" """,
        ["fail"] = """ "reason": "'no'" """,
        ["http"] = """ "method": "GET", "url": "'https://x.example'" """,
        ["subWorkflow"] = """ "definition": "child" """,
        ["parallel"] = """ "branches": [ { "name": "b", "steps": [ { "id": "b1", "type": "assign", "set": { "y": "1" } } ] } ] """,
    };

    private static readonly Dictionary<string, string> FieldValues = new()
    {
        ["next"] = "\"done\"", ["set"] = """{ "x": "1" }""", ["signal"] = "\"go\"", ["timeout"] = "\"PT1S\"", ["onTimeout"] = "\"done\"",
        ["output"] = "\"out\"", ["duration"] = "\"PT1S\"", ["branches"] = """[ { "when": "true", "next": "done" } ]""",
        ["otherwise"] = "\"done\"", ["title"] = "\"T\"", ["assignee"] = "\"'a'\"", ["role"] = "\"r\"", ["data"] = "\"1\"",
        ["result"] = "\"1\"", ["reason"] = "\"'r'\"", ["method"] = "\"GET\"", ["url"] = "\"'u'\"", ["body"] = "\"1\"",
        ["headers"] = """{ "h": "'v'" }""", ["retries"] = "1", ["definition"] = "\"child\"", ["version"] = "1", ["input"] = "\"1\"",
        ["onError"] = "\"done\"", ["errorOutput"] = "\"err\"",
    };

    /// <summary>The fields each type accepts besides id, type and description (docs/definition-format.md).</summary>
    private static readonly Dictionary<string, string[]> OwnFields = new()
    {
        ["assign"] = ["next", "set", "onError", "errorOutput"],
        ["waitForSignal"] = ["next", "signal", "output", "timeout", "onTimeout"],
        ["delay"] = ["next", "duration"],
        ["decision"] = ["branches", "otherwise", "onError", "errorOutput"],
        ["humanTask"] = ["next", "title", "role", "assignee", "data", "output", "onError", "errorOutput"],
        ["complete"] = ["result", "onError", "errorOutput"],
        ["fail"] = ["reason", "onError", "errorOutput"],
        ["http"] = ["next", "method", "url", "body", "headers", "timeout", "retries", "output", "onError", "errorOutput"],
        ["subWorkflow"] = ["next", "definition", "version", "input", "output"],
        ["parallel"] = ["next", "branches"],
    };

    public static TheoryData<string, string> ForeignFields()
    {
        var data = new TheoryData<string, string>();
        foreach (var (type, own) in OwnFields)
        {
            foreach (var field in FieldValues.Keys.Except(own))
            {
                data.Add(type, field);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(ForeignFields))]
    public void A_field_of_another_step_type_does_not_apply(string type, string field)
    {
        Valid(Steps($$"""{ "id": "s", "type": "{{type}}", {{MinimalSteps[type]}} }""", Done));

        Refused(Steps($$"""{ "id": "s", "type": "{{type}}", {{MinimalSteps[type]}}, "{{field}}": {{FieldValues[field]}} }""", Done),
            ($"$.steps[0].{field}", $"{field} does not apply to the step type {type}"));
    }

    [Fact]
    public void Every_problem_is_reported_at_once_in_document_order()
    {
        Refused("""
            { "name": "t", "steps": [
              { "id": "a", "type": "assign", "set": { "x": "1" }, "signal": "go" },
              { "id": "b", "type": "assign", "set": { "y": "2" }, "next": "reviw" },
              { "id": "c", "type": "waitForSignal", "signal": "go", "timeout": "14 days", "onTimeout": "done" },
              { "id": "done", "type": "complete" } ] }
            """,
            ("$.steps[0].signal", "signal does not apply to the step type assign"),
            ("$.steps[1].next", "no step has the id 'reviw'"),
            ("$.steps[2].timeout", $"'14 days' {NotADuration}"));
    }

    // ---- expressions and variables ----

    [Theory]
    [InlineData("")]
    [InlineData("   ")]
    public void An_empty_expression_is_invalid(string source)
    {
        Refused(Steps($$"""{ "id": "done", "type": "complete", "result": "{{source}}" }"""),
            ("$.steps[0].result", "invalid expression: the expression is empty"));
    }

    [Theory]
    [InlineData("1 +")]
    [InlineData("let x = 1; x + 1")]
    [InlineData("1) + (2")]
    [InlineData("if (true) 1")]
    public void An_expression_that_does_not_parse_as_one_expression_is_invalid(string source)
    {
        var (_, diagnostics) = Compile(Steps($$"""{ "id": "done", "type": "complete", "result": "{{source}}" }"""));

        var problem = Assert.Single(diagnostics);
        Assert.Equal("$.steps[0].result", problem.Path);
        Assert.StartsWith("invalid expression: ", problem.Message, StringComparison.Ordinal);
        Assert.True(problem.Message.Length > "invalid expression: ".Length, "the parser's message follows");
    }

    [Fact]
    public void Every_expression_field_is_checked_with_its_own_path()
    {
        var (_, diagnostics) = Compile(Steps(
            """{ "id": "a", "type": "assign", "set": { "x": "1 +" } }""",
            """{ "id": "b", "type": "decision", "branches": [ { "when": "(", "next": "c" } ] }""",
            """{ "id": "c", "type": "humanTask", "title": "T", "assignee": "'a' +", "data": "{ a: }" }""",
            """{ "id": "d", "type": "http", "method": "GET", "url": "'u' +", "body": "[", "headers": { "X-A": "'a' *" } }""",
            """{ "id": "e", "type": "subWorkflow", "definition": "child", "input": "{" }""",
            """{ "id": "f", "type": "fail", "reason": "'x' +" }"""));

        Assert.Equal(
            ["$.steps[0].set.x", "$.steps[1].branches[0].when", "$.steps[2].assignee", "$.steps[2].data", "$.steps[3].url",
             "$.steps[3].body", "$.steps[3].headers.X-A", "$.steps[4].input", "$.steps[5].reason"],
            diagnostics.Select(d => d.Path));
        Assert.All(diagnostics, d => Assert.StartsWith("invalid expression: ", d.Message, StringComparison.Ordinal));
    }

    [Fact]
    public void Assign_needs_at_least_one_assignment()
    {
        Refused(Steps("""{ "id": "a", "type": "assign" }""", Done), ("$.steps[0].set", "set must name at least one variable"));
        Refused(Steps("""{ "id": "a", "type": "assign", "set": {} }""", Done), ("$.steps[0].set", "set must name at least one variable"));
    }

    [Fact]
    public void Assign_needs_valid_variable_names_and_an_expression_for_each()
    {
        Refused(Steps("""{ "id": "a", "type": "assign", "set": { "1x": "1", "ok": null, "a.b": "2" } }""", Done),
            ("$.steps[0].set.1x", "'1x' is not a valid variable name"),
            ("$.steps[0].set.ok", "set.ok is required for the step type assign"),
            ("$.steps[0].set.a.b", "'a.b' is not a valid variable name"));
    }

    [Fact]
    public void Assign_refuses_proto_as_a_variable_name()
    {
        Refused(Steps("""{ "id": "a", "type": "assign", "set": { "__proto__": "({ x: 1 })", "constructor": "1", "prototype": "2" } }""", Done),
            ("$.steps[0].set.__proto__", ProtoReserved));
    }

    [Fact]
    public void A_variable_name_is_at_most_64_characters()
    {
        Valid(Steps($$"""{ "id": "a", "type": "assign", "set": { "{{new string('v', 64)}}": "1" } }""", Done));
        var tooLong = new string('v', 65);
        Refused(Steps($$"""{ "id": "a", "type": "assign", "set": { "{{tooLong}}": "1" } }""", Done),
            ($"$.steps[0].set.{tooLong}", $"'{tooLong}' is not a valid variable name"));
    }

    [Theory]
    [InlineData("""{ "id": "s", "type": "waitForSignal", "signal": "go", "output": "a-b" }""")]
    [InlineData("""{ "id": "s", "type": "humanTask", "title": "T", "output": "a-b" }""")]
    [InlineData("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "output": "a-b" }""")]
    [InlineData("""{ "id": "s", "type": "subWorkflow", "definition": "child", "output": "a-b" }""")]
    public void An_output_must_be_a_valid_variable_name(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].output", "'a-b' is not a valid variable name"));
    }

    [Theory]
    [InlineData("""{ "id": "s", "type": "waitForSignal", "signal": "go", "output": "__proto__" }""")]
    [InlineData("""{ "id": "s", "type": "humanTask", "title": "T", "output": "__proto__" }""")]
    [InlineData("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "output": "__proto__" }""")]
    [InlineData("""{ "id": "s", "type": "subWorkflow", "definition": "child", "output": "__proto__" }""")]
    public void An_output_cannot_be_proto(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].output", ProtoReserved));
    }

    [Fact]
    public void A_branch_step_output_cannot_be_proto()
    {
        Refused(Steps("""
            { "id": "p", "type": "parallel", "branches": [ { "name": "b", "steps": [ { "id": "w", "type": "waitForSignal", "signal": "go", "output": "__proto__" } ] } ] }
            """, Done),
            ("$.steps[0].branches[0].steps[0].output", ProtoReserved));
    }

    // ---- waitForSignal and delay ----

    [Theory]
    [InlineData("""{ "id": "s", "type": "waitForSignal" }""")]
    [InlineData("""{ "id": "s", "type": "waitForSignal", "signal": "$timer" }""")]
    [InlineData("""{ "id": "s", "type": "waitForSignal", "signal": "two words" }""")]
    public void WaitForSignal_needs_a_valid_signal_name(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].signal", "signal is required: the name of the awaited signal (letters, digits, '.', '_' or '-')"));
    }

    [Fact]
    public void A_timeout_needs_onTimeout()
    {
        Refused(Steps("""{ "id": "s", "type": "waitForSignal", "signal": "go", "timeout": "PT1M" }""", Done),
            ("$.steps[0].onTimeout", "onTimeout is required for the step type waitForSignal"));
    }

    [Fact]
    public void OnTimeout_needs_a_timeout_and_must_name_a_step()
    {
        Refused(Steps("""{ "id": "s", "type": "waitForSignal", "signal": "go", "onTimeout": "done" }""", Done),
            ("$.steps[0].onTimeout", "onTimeout needs a timeout"));
        Refused(Steps("""{ "id": "s", "type": "waitForSignal", "signal": "go", "timeout": "PT1M", "onTimeout": "nowhere" }""", Done),
            ("$.steps[0].onTimeout", "no step has the id 'nowhere'"));
    }

    [Theory]
    [InlineData("14 days")]
    [InlineData("P2W")]
    [InlineData("-PT1S")]
    [InlineData("P36500DT1S")]
    [InlineData("PT")]
    [InlineData("30")]
    public void A_timeout_or_duration_must_be_an_ISO_8601_duration_from_zero_to_100_years(string text)
    {
        Refused(Steps($$"""{ "id": "s", "type": "waitForSignal", "signal": "go", "timeout": "{{text}}", "onTimeout": "done" }""", Done),
            ("$.steps[0].timeout", $"'{text}' {NotADuration}"));
        Refused(Steps($$"""{ "id": "s", "type": "delay", "duration": "{{text}}" }""", Done),
            ("$.steps[0].duration", $"'{text}' {NotADuration}"));
    }

    [Fact]
    public void Delay_needs_a_duration()
    {
        Refused(Steps("""{ "id": "s", "type": "delay" }""", Done), ("$.steps[0].duration", "duration is required for the step type delay"));
    }

    // ---- decision ----

    [Theory]
    [InlineData("""{ "id": "s", "type": "decision", "otherwise": "done" }""")]
    [InlineData("""{ "id": "s", "type": "decision", "branches": [], "otherwise": "done" }""")]
    public void A_decision_needs_at_least_one_branch(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].branches", "a decision needs at least one branch"));
    }

    [Fact]
    public void A_decision_branch_needs_when_and_a_next_that_names_a_step()
    {
        Refused(Steps("""
                { "id": "s", "type": "decision", "branches": [ { "next": "done" }, { "when": "true" }, { "when": "true", "next": "nowhere" }, null ],
                  "otherwise": "elsewhere" }
                """, Done),
            ("$.steps[0].branches[0].when", "branches[0].when is required for the step type decision"),
            ("$.steps[0].branches[1].next", "branches[1].next is required for the step type decision"),
            ("$.steps[0].branches[2].next", "no step has the id 'nowhere'"),
            ("$.steps[0].branches[3].when", "branches[3].when is required for the step type decision"),
            ("$.steps[0].branches[3].next", "branches[3].next is required for the step type decision"),
            ("$.steps[0].otherwise", "no step has the id 'elsewhere'"));
    }

    [Fact]
    public void A_decision_branch_has_no_name_or_steps()
    {
        Refused(Steps("""{ "id": "s", "type": "decision", "branches": [ { "when": "true", "next": "done", "name": "x", "steps": [] } ] }""", Done),
            ("$.steps[0].branches[0].name", "branches[0].name does not apply to the step type decision"),
            ("$.steps[0].branches[0].steps", "branches[0].steps does not apply to the step type decision"));
    }

    // ---- humanTask, fail, subWorkflow ----

    [Theory]
    [InlineData("""{ "id": "s", "type": "humanTask" }""")]
    [InlineData("""{ "id": "s", "type": "humanTask", "title": "" }""")]
    [InlineData("""{ "id": "s", "type": "humanTask", "title": "   " }""")]
    public void A_human_task_needs_a_title(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].title", "title is required for a humanTask step"));
    }

    [Fact]
    public void Fail_needs_a_reason()
    {
        Refused(Steps("""{ "id": "s", "type": "fail" }"""), ("$.steps[0].reason", "reason is required for the step type fail"));
    }

    [Theory]
    [InlineData("""{ "id": "s", "type": "subWorkflow" }""")]
    [InlineData("""{ "id": "s", "type": "subWorkflow", "definition": "bad name" }""")]
    public void A_sub_workflow_needs_the_name_of_its_child_definition(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].definition", "definition is required: the name of the child definition"));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public void A_sub_workflow_version_must_be_positive(int version)
    {
        Refused(Steps($$"""{ "id": "s", "type": "subWorkflow", "definition": "child", "version": {{version}} }""", Done),
            ("$.steps[0].version", "version must be a positive version number"));
    }

    // ---- http ----

    [Theory]
    [InlineData("""{ "id": "s", "type": "http", "url": "'u'" }""")]
    [InlineData("""{ "id": "s", "type": "http", "method": "get", "url": "'u'" }""")]
    [InlineData("""{ "id": "s", "type": "http", "method": "HEAD", "url": "'u'" }""")]
    public void An_http_step_needs_a_supported_method(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].method", "method is required: one of GET, POST, PUT, PATCH, DELETE"));
    }

    [Fact]
    public void An_http_step_needs_a_url_and_an_expression_for_each_header()
    {
        Refused(Steps("""{ "id": "s", "type": "http", "method": "GET", "headers": { "X-A": null } }""", Done),
            ("$.steps[0].url", "url is required for the step type http"),
            ("$.steps[0].headers.X-A", "headers.X-A is required for the step type http"));
    }

    [Fact]
    public void An_http_timeout_is_more_than_zero_and_at_most_five_minutes()
    {
        Valid(Steps("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "timeout": "PT5M" }""", Done));
        Valid(Steps("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "timeout": "PT0.001S" }""", Done));
        Refused(Steps("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "timeout": "PT5M0.001S" }""", Done),
            ("$.steps[0].timeout", "an http step's timeout is more than PT0S and at most PT5M"));
        Refused(Steps("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "timeout": "PT0S" }""", Done),
            ("$.steps[0].timeout", "an http step's timeout is more than PT0S and at most PT5M"));
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(11)]
    public void Http_retries_are_between_0_and_10(int retries)
    {
        Refused(Steps($$"""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "retries": {{retries}} }""", Done),
            ("$.steps[0].retries", "retries must be between 0 and 10"));
    }

    // ---- error paths ----

    [Theory]
    [InlineData("""{ "id": "s", "type": "assign", "set": { "x": "1" }, "errorOutput": "err" }""")]
    [InlineData("""{ "id": "s", "type": "http", "method": "GET", "url": "'u'", "errorOutput": "err" }""")]
    [InlineData("""{ "id": "s", "type": "complete", "errorOutput": "err" }""")]
    public void ErrorOutput_needs_onError(string step)
    {
        Refused(Steps(step, Done), ("$.steps[0].errorOutput", "errorOutput needs onError"));
    }

    [Fact]
    public void OnError_must_name_a_step_and_errorOutput_must_be_a_variable_name()
    {
        Refused(Steps("""{ "id": "s", "type": "assign", "set": { "x": "1" }, "onError": "nowhere", "errorOutput": "1err" }""", Done),
            ("$.steps[0].onError", "no step has the id 'nowhere'"),
            ("$.steps[0].errorOutput", "'1err' is not a valid variable name"));
    }

    [Fact]
    public void ErrorOutput_cannot_be_proto()
    {
        Refused(Steps("""{ "id": "s", "type": "assign", "set": { "x": "1" }, "onError": "done", "errorOutput": "__proto__" }""", Done),
            ("$.steps[0].errorOutput", ProtoReserved));
    }
}
