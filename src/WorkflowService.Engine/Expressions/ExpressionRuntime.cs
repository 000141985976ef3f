using System.Diagnostics.CodeAnalysis;
using Jint;
using JsEngine = Jint.Engine;
using Jint.Native;
using Jint.Native.Json;
using Jint.Runtime;
using Microsoft.Extensions.Options;

namespace WorkflowService.Engine.Expressions;

/// <summary>
/// Parses and runs definition expressions in Jint (ECMAScript), sandboxed: no CLR access, no modules, and limits on
/// time, memory, recursion and statements for every evaluation.
/// </summary>
public sealed class ExpressionRuntime(IOptions<ExpressionOptions> options, TimeProvider time)
{
    private readonly ExpressionOptions _options = options.Value;
    private readonly ClockTimeSystem _clock = new(time);

    /// <summary>Parses an expression; throws <see cref="ExpressionSyntaxException"/> with the parser's message.</summary>
    [SuppressMessage("Performance", "CA1822:Mark members as static", Justification = "Compiling is part of the runtime the container configures and the compilers hold (StepCompilation takes it); a static Compile would leave that dependency unread and split the expression API in two.")]
    public CompiledExpression Compile(string source)
    {
        ArgumentNullException.ThrowIfNull(source);
        if (string.IsNullOrWhiteSpace(source))
        {
            throw new ExpressionSyntaxException("the expression is empty");
        }

        try
        {
            // The text must parse as one expression on its own (no statements smuggled in past a closing parenthesis);
            // it is then prepared as a script that evaluates just that expression.
            new Acornima.Parser().ParseExpression(source);
            var script = JsEngine.PrepareScript("(" + source + "\n)", strict: true);
            return new CompiledExpression(source, script);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            throw new ExpressionSyntaxException(e.Message);
        }
    }

    /// <summary>Opens a scope for one run of an instance between two wait points.</summary>
    public ExpressionScope OpenScope(string variablesJson, string? inputJson, string? signalJson, string instanceJson)
    {
        var deadline = new EvaluationDeadline(_options.Timeout);
        var engine = new JsEngine(o =>
        {
            o.Strict();
            // Time: checked before every statement (EvaluationDeadline), and inside one regular-expression match, where
            // no statement check comes, by the regex timeout (Jint's default would be 10 s). The match's
            // RegexMatchTimeoutException is a TimeoutException, reported below like the deadline's own.
            o.Constraint(deadline);
            o.Constraints.RegexTimeout = _options.Timeout;
            o.LimitMemory(_options.MemoryLimitBytes);
            o.LimitRecursion(_options.RecursionLimit);
            o.MaxStatements(_options.MaxStatements);
            o.Interop.Enabled = false;
            o.TimeSystem = _clock;
        });
        return new ExpressionScope(engine, deadline, variablesJson, inputJson, signalJson, instanceJson);
    }
}

public sealed class ExpressionSyntaxException(string message) : Exception(message);

/// <summary>
/// The JavaScript globals one run sees: <c>vars</c> (mutable instance variables), <c>input</c>, <c>signal</c> (payload
/// of the signal that resumed the run) and <c>instance</c>. Variables are parsed once and serialised once per run.
/// </summary>
public sealed class ExpressionScope
{
    private readonly JsEngine _engine;
    private readonly EvaluationDeadline _deadline;
    private readonly JsonParser _parser;
    private readonly JsonSerializer _serializer;
    private readonly JsValue _vars;

    internal ExpressionScope(
        JsEngine engine, EvaluationDeadline deadline, string variablesJson, string? inputJson, string? signalJson, string instanceJson)
    {
        _engine = engine;
        _deadline = deadline;
        _parser = new JsonParser(engine);
        _serializer = new JsonSerializer(engine);
        _vars = _parser.Parse(variablesJson);
        engine.SetValue("vars", _vars);
        engine.SetValue("input", inputJson is null ? JsValue.Null : _parser.Parse(inputJson));
        engine.SetValue("signal", signalJson is null ? JsValue.Null : _parser.Parse(signalJson));
        engine.SetValue("instance", _parser.Parse(instanceJson));
    }

    /// <summary>Replaces the <c>signal</c> global, after the run consumed another signal.</summary>
    public void SetSignal(string? payloadJson) =>
        _engine.SetValue("signal", payloadJson is null ? JsValue.Null : _parser.Parse(payloadJson));

    public JsValue Evaluate(CompiledExpression expression)
    {
        _deadline.Begin();
        try
        {
            return _engine.Evaluate(expression.Script);
        }
        catch (TimeoutException) // also RegexMatchTimeoutException: a match that outlived the regex timeout
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' exceeded its time limit");
        }
        catch (MemoryLimitExceededException)
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' exceeded its memory limit");
        }
        catch (RecursionDepthOverflowException)
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' exceeded its recursion limit");
        }
        catch (StatementsCountOverflowException)
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' exceeded its statement limit");
        }
        catch (JavaScriptException e)
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' threw: {e.Message}");
        }
        catch (JintException e)
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' failed: {e.Message}");
        }
        finally
        {
            _deadline.End();
        }
    }

    public bool EvaluateCondition(CompiledExpression expression) => TypeConverter.ToBoolean(Evaluate(expression));

    public string EvaluateToJson(CompiledExpression expression) => ToJson(Evaluate(expression), expression.Source);

    public string? EvaluateToString(CompiledExpression expression)
    {
        var value = Evaluate(expression);
        if (value.IsNull() || value.IsUndefined())
        {
            return null;
        }

        // Converting runs script too (toString), under a budget of its own.
        _deadline.Begin();
        try
        {
            return TypeConverter.ToString(value);
        }
        catch (TimeoutException)
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' exceeded its time limit");
        }
        finally
        {
            _deadline.End();
        }
    }

    public void Assign(string variable, CompiledExpression expression)
    {
        var value = Evaluate(expression);
        // Round-trip through JSON so that only plain data (no functions, no cycles) is ever stored.
        var json = ToJson(value, expression.Source);
        _vars.AsObject().Set(variable, _parser.Parse(json));
    }

    public void AssignJson(string variable, string? json) =>
        _vars.AsObject().Set(variable, json is null ? JsValue.Null : _parser.Parse(json));

    public string SerializeVariables() => _serializer.Serialize(_vars).ToString();

    private string ToJson(JsValue value, string source)
    {
        if (value.IsUndefined())
        {
            return "null";
        }

        // Serialising runs script too (toJSON), under a budget of its own.
        _deadline.Begin();
        try
        {
            var json = _serializer.Serialize(value);
            return json.IsUndefined() ? "null" : json.ToString();
        }
        catch (TimeoutException)
        {
            throw new ExpressionFailedException($"expression '{Shorten(source)}' exceeded its time limit");
        }
        catch (JavaScriptException e)
        {
            throw new ExpressionFailedException($"expression '{Shorten(source)}' produced a value that is not JSON: {e.Message}");
        }
        finally
        {
            _deadline.End();
        }
    }

    private static string Shorten(string source) => source.Length <= 80 ? source : source[..77] + "...";
}
