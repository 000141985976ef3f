using System.Net;
using System.Net.Sockets;

namespace WorkflowService.Testing;

/// <summary>Ports on the loopback interface for the servers the runner and the tests start (services, Redis, receivers).</summary>
internal static class LoopbackPort
{
    /// <summary>A port free now (the system's choice); another process may still take it before it is bound.</summary>
    public static int Free()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
