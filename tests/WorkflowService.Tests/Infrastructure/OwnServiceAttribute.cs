namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// On a test of a <see cref="SharedServiceTest{TBackend}"/> class: this test gets a service and database of its own, with
/// the class's settings and its <c>ConfigureServices</c>, instead of the class's shared one. For tests that count or list
/// what the whole service did, or swap services that hold the test's own state.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class OwnServiceAttribute : Attribute;
