using System.Data.Common;
using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// One hand-written statement with its parameters (in the dialect's placeholders: @p0 or $1, …), values converted the way the dialect stores them.
/// </summary>
internal sealed class SqlStatement(SqlDialect dialect)
{
    private readonly StringBuilder _text = new(256);
    private readonly List<object> _values = [];

    public string Text => _text.ToString();

    public IReadOnlyList<object> Parameters => _values;

    public SqlStatement Sql(string text)
    {
        _text.Append(text);
        return this;
    }

    /// <summary>Appends a parameter placeholder for <paramref name="value"/>.</summary>
    public SqlStatement Param(object? value)
    {
        _text.Append(dialect.Placeholder(_values.Count));
        _values.Add(dialect.ToDatabase(value));
        return this;
    }

    /// <summary>Binds values to placeholders already in the text (the dialect's, in order).</summary>
    public SqlStatement Bind(params object?[] values)
    {
        foreach (var value in values)
        {
            _values.Add(dialect.ToDatabase(value));
        }

        return this;
    }

    /// <summary>Appends "(pN, pN+1, …)" in the dialect's placeholders for a row of values.</summary>
    public void Values(object?[] values)
    {
        _text.Append('(');
        List(values);
        _text.Append(')');
    }

    /// <summary>Appends "pN, pN+1, …" in the dialect's placeholders (an INSERT … SELECT's select list).</summary>
    public SqlStatement List(object?[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        for (var i = 0; i < values.Length; i++)
        {
            if (i > 0)
            {
                _text.Append(", ");
            }

            Param(values[i]);
        }

        return this;
    }

    /// <summary>Sets this statement's text and parameters on a command.</summary>
    [SuppressMessage("Security", "CA2100:Review SQL queries for security vulnerabilities", Justification = "A statement's text is only the dialect's constant SQL and parameter placeholders; every value goes in as a parameter.")]
    public void ApplyTo(DbCommand command)
    {
        command.CommandText = Text;
        AddParameters(command.Parameters, command.CreateParameter);
    }

    /// <summary>Sets this statement's text and parameters on a command of a batch.</summary>
    public void ApplyTo(DbBatchCommand command)
    {
        command.CommandText = Text;
        AddParameters(command.Parameters, command.CreateParameter);
    }

    private void AddParameters(DbParameterCollection parameters, Func<DbParameter> create)
    {
        for (var i = 0; i < _values.Count; i++)
        {
            var parameter = create();
            if (!dialect.PositionalParameters)
            {
                parameter.ParameterName = dialect.Placeholder(i);
            }

            TypedNull.Bind(parameter, _values[i]);
            parameters.Add(parameter);
        }
    }
}
