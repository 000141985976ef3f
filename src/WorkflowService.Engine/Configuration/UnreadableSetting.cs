namespace WorkflowService.Engine.Configuration;

/// <summary>A configured value its option cannot take: the key, the value as written, and what the key takes.</summary>
public sealed record UnreadableSetting(string Key, string Value, string Expected)
{
    /// <summary>The operator's message: the key, the value (unless it may be a secret) and what is expected.</summary>
    public string Message => SettingValues.MayBeSecret(Key)
        ? $"{Key} cannot be read; expected {Expected}."
        : $"{Key} '{Value}' cannot be read; expected {Expected}.";
}
