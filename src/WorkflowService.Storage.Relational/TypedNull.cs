using System.Data;
using System.Data.Common;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// A null whose column type is known, bound with that type. An untyped null reaches PostgreSQL as "unknown", so one
/// statement text gets other parameter types whenever another of its values is null, and Npgsql's prepared copy of it no
/// longer fits: the history row's INSERT, shared by a start (no step) and a completion (a step), was planned on most of
/// its executions.
/// </summary>
internal sealed class TypedNull
{
    private TypedNull(DbType type) => Type = type;

    public DbType Type { get; }

    public static readonly TypedNull String = new(DbType.String);
    public static readonly TypedNull Guid = new(DbType.Guid);
    public static readonly TypedNull Int64 = new(DbType.Int64);
    public static readonly TypedNull Double = new(DbType.Double);
    public static readonly TypedNull Boolean = new(DbType.Boolean);

    /// <summary>A UTC time's: Npgsql sends UTC <see cref="System.DateTime"/> values as timestamp with time zone.</summary>
    public static readonly TypedNull Utc = new(DbType.DateTimeOffset);

    public static object Of(string? value) => value ?? (object)String;

    public static object Of(Guid? value) => value ?? (object)Guid;

    public static object Of(long? value) => value ?? (object)Int64;

    public static object Of(DateTime? value) => value ?? (object)Utc;

    /// <summary>Sets <paramref name="value"/> on <paramref name="parameter"/>: a typed null as DBNull of its type.</summary>
    public static void Bind(DbParameter parameter, object value)
    {
        if (value is TypedNull typed)
        {
            parameter.DbType = typed.Type;
            parameter.Value = DBNull.Value;
        }
        else
        {
            parameter.Value = value;
        }
    }
}
