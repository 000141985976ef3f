namespace WorkflowService.OperatorConsole;

/// <summary>
/// A console cookie marked Secure whatever scheme this node sees, when <paramref name="alwaysSecure"/>: behind a proxy that
/// ends TLS the request arrives over plain HTTP. Its <see cref="CookieBuilder.SecurePolicy"/> stays SameAsRequest, because
/// antiforgery with the Always policy refuses every request that is not HTTPS at the node, the proxied ones among them.
/// </summary>
public sealed class ConsoleCookieBuilder(bool alwaysSecure) : CookieBuilder
{
    public override CookieOptions Build(HttpContext context, DateTimeOffset expiresFrom)
    {
        var options = base.Build(context, expiresFrom);
        options.Secure |= alwaysSecure;
        return options;
    }
}
