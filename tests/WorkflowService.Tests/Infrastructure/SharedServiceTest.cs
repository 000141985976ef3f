using Xunit.v3;
using WorkflowService.Tests.Backends;

namespace WorkflowService.Tests.Infrastructure;

/// <summary>
/// Base of a compliance suite whose tests share one service and one database per test class (and so per backend):
/// <see cref="ServiceTest{TBackend}.Api"/> is the class's <see cref="SharedService{TBackend}"/>, started by its first test
/// with <see cref="ServiceTest{TBackend}.Settings"/>.
/// </summary>
/// <remarks>
/// Tests of one class run one after another, but each finds what the tests before it left in the store, and the
/// workers still finishing it. A test on a shared service therefore only asserts on what it created itself: a definition
/// under a <see cref="Definitions.Unique"/> name, the instances it started, lists filtered by those. A test that counts or
/// lists what the whole service did, or needs services of its own (<c>ConfigureServices</c> applies to those only), is
/// marked <see cref="OwnServiceAttribute"/>, or starts its own with <see cref="ServiceTest{TBackend}.StartServiceAsync"/>.
/// </remarks>
public abstract class SharedServiceTest<TBackend> : ServiceTest<TBackend>, IClassFixture<SharedService<TBackend>>
    where TBackend : StoreBackend, new()
{
    public override async ValueTask InitializeAsync()
    {
        if ((TestContext.Current.TestMethod as IXunitTestMethod)?.Method.IsDefined(typeof(OwnServiceAttribute), inherit: true) == true)
        {
            await base.InitializeAsync();
            return;
        }

        var shared = await TestContext.Current.GetFixture<SharedService<TBackend>>()
                     ?? throw new InvalidOperationException($"xunit made no {nameof(SharedService<TBackend>)} fixture for {GetType().Name}");
        var factory = await shared.GetAsync(Settings);
        // A client of this test's own over the shared server: no default header or cookie carries over between tests.
        var http = factory.CreateClient();
        Own(new DisposeClient(http));
        UseService(factory, new ApiClient(http));
    }

    private sealed class DisposeClient(HttpClient http) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            http.Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
