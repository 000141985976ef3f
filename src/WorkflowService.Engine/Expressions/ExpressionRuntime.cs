using System.Diagnostics;
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

    internal int MaxStringLength => _options.MaxStringLength;
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
            var parsed = new Acornima.Parser().ParseExpression(source);
            var (secrets, secretError) = SecretReferences.Find(parsed);
            if (secretError is not null)
            {
                throw new ExpressionSyntaxException(secretError);
            }

            var script = JsEngine.PrepareScript("(" + source + "\n)", strict: true);
            return new CompiledExpression(source, script, secrets, StringLimits.MayReach(parsed), ExpressionDependencies.Of(parsed), DataPath.Of(parsed));
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            throw new ExpressionSyntaxException(e.Message);
        }
    }

    /// <summary>
    /// Opens a scope for one run of an instance between two wait points. Nothing is built until the run first needs
    /// JavaScript: a run that evaluates no expression (a start that goes straight to its first wait) builds no engine and
    /// parses no JSON, and keeps the variables' text as it was.
    /// </summary>
    public ExpressionScope OpenScope(string variablesJson, string? inputJson, string? signalJson, Func<string> instanceJson) =>
        new(this, variablesJson, inputJson, signalJson, instanceJson);

    /// <summary>A fresh sandboxed engine for one run, with its own evaluation deadline.</summary>
    internal (JsEngine Engine, EvaluationDeadline Deadline) CreateEngine()
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
            o.Constraints.MaxArraySize = (uint)_options.MaxArrayLength;
            o.Interop.Enabled = false;
            // No code from strings: eval and new Function would run text the compiler never saw (nor classified).
            o.Host.StringCompilationAllowed = false;
            o.TimeSystem = _clock;
            // toLocaleString, localeCompare and the like answer the same on every node, whatever the host's locale.
            o.Culture = System.Globalization.CultureInfo.InvariantCulture;
        });
        return (engine, deadline);
    }
}

/// <summary>A value given as its JSON text (see <see cref="ExpressionScope.EvaluateToPlain"/>).</summary>
public sealed record JsonText(string Json);

/// <summary>The instance's variables, input or signal could not be read into the run's scope (JSON that does not parse).</summary>
public sealed class ScopeLoadException(string message, Exception inner) : Exception(message, inner);

public sealed class ExpressionSyntaxException(string message) : Exception(message);

/// <summary>
/// The JavaScript globals one run sees: <c>vars</c> (mutable instance variables), <c>input</c>, <c>signal</c> (payload
/// of the signal that resumed the run), <c>instance</c>, and in a forEach body <c>item</c> and <c>itemIndex</c>. The engine is built and the variables parsed on first use,
/// once per run; the variables are serialised once at the run's end, and only when the run opened them.
/// </summary>
public sealed class ExpressionScope
{
    private readonly ExpressionRuntime _runtime;
    private readonly string _variablesJson;
    private readonly string? _inputJson;
    private readonly Func<string> _instanceJson;
    private string? _signalJson;
    private string? _itemJson;
    private int? _itemIndex;
    private Open? _open;
    private long _runEnds = long.MaxValue;
    private string? _secretNonce;
    private bool _stringsLimited;

    /// <summary>What an opened scope holds: the engine, its deadline, and the parsed <c>vars</c>.</summary>
    private sealed record Open(JsEngine Engine, EvaluationDeadline Deadline, JsonSerializer Serializer, JsValue Vars);

    internal ExpressionScope(ExpressionRuntime runtime, string variablesJson, string? inputJson, string? signalJson, Func<string> instanceJson)
    {
        _runtime = runtime;
        _variablesJson = variablesJson;
        _inputJson = inputJson;
        _signalJson = signalJson;
        _instanceJson = instanceJson;
    }

    /// <summary>Ends every evaluation of this scope no later than <paramref name="budget"/> from now: the run's own budget.</summary>
    public void LimitTo(TimeSpan budget) =>
        _runEnds = Stopwatch.GetTimestamp() + (long)(budget.TotalSeconds * Stopwatch.Frequency);

    /// <summary>
    /// A scope to evaluate what the run leaves behind (search attributes): the variables as they will be stored
    /// (<paramref name="variablesJson"/>), the input, the last signal and the instance, on an engine no step of the run has
    /// touched (a step may have changed the input or a built-in in its own engine), with a budget of its own. A run that
    /// built no engine evaluated nothing, so its scope is that engine-to-be.
    /// </summary>
    public ExpressionScope ForSettledValues(string variablesJson, TimeSpan budget)
    {
        var scope = _open is null
            ? this
            : new ExpressionScope(_runtime, variablesJson, _inputJson, _signalJson, _instanceJson);
        scope.SetItem(null, null);
        scope.LimitTo(budget);
        return scope;
    }

    /// <summary>
    /// The nonce of the secret references this scope's expressions produced (see <see cref="SecretReferences"/>); null
    /// when none called <c>secret</c>.
    /// </summary>
    public string? SecretNonce => _secretNonce;

    /// <summary>
    /// The variables' and the input's JSON text while no engine holds them (null once one is built: an expression may
    /// have changed them there). What a <see cref="DataPath"/> reads.
    /// </summary>
    public (string Variables, string? Input)? DataText => _open is null && _loadFailure is null ? (_variablesJson, _inputJson) : null;

    /// <summary>Whether the run has used JavaScript (built the engine) so far.</summary>
    public bool IsOpen => _open is not null;

    private Open Opened => _open ??= _loadFailure is { } failed ? throw new ScopeLoadException(failed.Message, failed) : OpenNow();

    /// <summary>Why the globals could not be loaded: every later evaluation fails the same way, without trying again.</summary>
    private Exception? _loadFailure;

    private Open OpenNow()
    {
        var (engine, deadline) = _runtime.CreateEngine();
        JsValue vars;
        try
        {
            vars = JsonValues.Parse(engine, _variablesJson);
            engine.SetValue("vars", vars);
            engine.SetValue("input", _inputJson is null ? JsValue.Null : JsonValues.Parse(engine, _inputJson));
            engine.SetValue("signal", _signalJson is null ? JsValue.Null : JsonValues.Parse(engine, _signalJson));
            engine.SetValue("instance", JsonValues.Parse(engine, _instanceJson()));
            SetItemGlobals(engine);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // Whatever stops the globals from loading fails the run as it did when they loaded before its first step.
            _loadFailure = e;
            throw new ScopeLoadException(e.Message, e);
        }

        return new Open(engine, deadline, new JsonSerializer(engine), vars);
    }

    /// <summary>Replaces the <c>signal</c> global, after the run consumed another signal.</summary>
    public void SetSignal(string? payloadJson)
    {
        _signalJson = payloadJson;
        if (_open is { } open)
        {
            open.Engine.SetValue("signal", payloadJson is null ? JsValue.Null : JsonValues.Parse(open.Engine, payloadJson));
        }
    }

    /// <summary>
    /// Sets the <c>item</c> and <c>itemIndex</c> globals to the forEach item whose body runs next (null and null
    /// outside a body).
    /// </summary>
    public void SetItem(string? itemJson, int? index)
    {
        if (_itemJson == itemJson && _itemIndex == index)
        {
            return;
        }

        _itemJson = itemJson;
        _itemIndex = index;
        if (_open is { } open)
        {
            SetItemGlobals(open.Engine);
        }
    }

    private void SetItemGlobals(JsEngine engine)
    {
        engine.SetValue("item", _itemJson is null ? JsValue.Null : JsonValues.Parse(engine, _itemJson));
        engine.SetValue("itemIndex", _itemIndex is { } index ? JsNumber.Create(index) : JsValue.Null);
    }

    public JsValue Evaluate(CompiledExpression expression)
    {
        var open = Opened;
        if (expression.Secrets.Count > 0 && _secretNonce is null)
        {
            // Only an expression that names a secret (an http step's, the compiler sees to it) gets the function.
            var nonce = _secretNonce = Guid.NewGuid().ToString("N");
            open.Engine.SetValue(SecretReferences.FunctionName, new Jint.Runtime.Interop.ClrFunction(open.Engine, SecretReferences.FunctionName,
                (_, args) => SecretReferences.Format(TypeConverter.ToString(args.Length > 0 ? args[0] : JsValue.Undefined), nonce)));
        }

        if (expression.MayBuildLongStrings && !_stringsLimited)
        {
            StringLimits.Install(open.Engine, _runtime.MaxStringLength);
            _stringsLimited = true;
        }

        open.Deadline.Begin(_runEnds);
        try
        {
            return open.Engine.Evaluate(expression.Script);
        }
        catch (TimeoutException) // also RegexMatchTimeoutException: a match that outlived the regex timeout
        {
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' exceeded its time limit");
        }
        catch (MemoryLimitExceededException e) when (e.Message.Contains("array", StringComparison.OrdinalIgnoreCase))
        {
            // Jint's MaxArraySize: refused before the array was allocated.
            throw new ExpressionFailedException($"expression '{Shorten(expression.Source)}' exceeded its array length limit (Expressions:MaxArrayLength)");
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
            open.Deadline.End();
        }
    }

    public bool EvaluateCondition(CompiledExpression expression) => TypeConverter.ToBoolean(Evaluate(expression));

    public string EvaluateToJson(CompiledExpression expression) => ToJson(Evaluate(expression), expression.Source);

    /// <summary>
    /// The value as plain data, without going through JSON where it need not: a string, a double (finite or not), a
    /// bool, or null for null and undefined; anything else (an object, an array, a BigInt) as its JSON text, a
    /// <see cref="JsonText"/>, as <see cref="EvaluateToJson"/> gives it.
    /// </summary>
    public object? EvaluateToPlain(CompiledExpression expression)
    {
        var value = Evaluate(expression);
        if (value.IsNull() || value.IsUndefined())
        {
            return null;
        }

        if (value.IsString())
        {
            return value.AsString();
        }

        if (value.IsNumber())
        {
            return value.AsNumber();
        }

        return value.IsBoolean() ? value.AsBoolean() : new JsonText(ToJson(value, expression.Source));
    }

    public string? EvaluateToString(CompiledExpression expression)
    {
        var value = Evaluate(expression);
        if (value.IsNull() || value.IsUndefined())
        {
            return null;
        }

        // Converting runs script too (toString), under a budget of its own.
        var deadline = Opened.Deadline;
        deadline.Begin(_runEnds);
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
            deadline.End();
        }
    }

    public void Assign(string variable, CompiledExpression expression)
    {
        var value = Evaluate(expression);
        // Round-trip through JSON so that only plain data (no functions, no cycles) is ever stored.
        var json = ToJson(value, expression.Source);
        var open = Opened;
        open.Vars.AsObject().Set(variable, JsonValues.Parse(open.Engine, json));
    }

    public void AssignJson(string variable, string? json)
    {
        var open = Opened;
        open.Vars.AsObject().Set(variable, json is null ? JsValue.Null : JsonValues.Parse(open.Engine, json));
    }

    /// <summary>The variables at the run's end: as they came in when the run never opened them.</summary>
    public string SerializeVariables() => _open is { } open ? open.Serializer.Serialize(open.Vars).ToString() : _variablesJson;

    private string ToJson(JsValue value, string source)
    {
        if (value.IsUndefined())
        {
            return "null";
        }

        // Serialising runs script too (toJSON), under a budget of its own.
        var open = Opened;
        open.Deadline.Begin(_runEnds);
        try
        {
            var json = open.Serializer.Serialize(value);
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
            open.Deadline.End();
        }
    }

    private static string Shorten(string source) => source.Length <= 80 ? source : source[..77] + "...";
}
