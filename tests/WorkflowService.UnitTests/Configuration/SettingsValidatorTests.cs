using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Configuration;

namespace WorkflowService.UnitTests.Configuration;

/// <summary>Options bound with AddSettings: values that cannot be read and values out of range, told with their keys.</summary>
public sealed class SettingsValidatorTests
{
    private static (TOptions? Options, string? Message) Bind<TOptions>(Dictionary<string, string?> settings) where TOptions : class
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();
        var services = new ServiceCollection();
        services.AddSettings<TOptions>(configuration.GetSection("Sample"));
        // What the container would hand the options factory (this project has no container): the registered instances.
        var instances = services.Select(d => d.ImplementationInstance).ToList();
        var factory = new OptionsFactory<TOptions>(instances.OfType<IConfigureOptions<TOptions>>(), [], instances.OfType<IValidateOptions<TOptions>>());
        try
        {
            return (factory.Create(Options.DefaultName), null);
        }
        catch (OptionsValidationException e)
        {
            return (null, string.Join(" ", e.Failures));
        }
    }

    [Fact]
    public void Readable_values_bind_as_configuration_binder_would()
    {
        var (options, message) = Bind<SampleOptions>(new()
        {
            ["Sample:Count"] = "7", ["Sample:Wait"] = "00:00:02", ["Sample:Mode"] = "fast", ["Sample:Limit"] = "",
            ["Sample:Nested:Flag"] = "true", ["Sample:Items:0:Flag"] = "false", ["Sample:Map:a:0"] = "x", ["Sample:Unknown"] = "ignored",
        });

        Assert.Null(message);
        Assert.Equal(7, options!.Count);
        Assert.Equal(TimeSpan.FromSeconds(2), options.Wait);
        Assert.Equal(SampleMode.Fast, options.Mode);
        Assert.True(options.Nested.Flag);
        Assert.False(Assert.Single(options.Items).Flag);
        Assert.Equal(["x"], options.Map["a"]);
    }

    [Fact]
    public void Every_value_that_cannot_be_read_is_told_with_its_key_and_the_others_still_bind()
    {
        var (_, message) = Bind<SampleOptions>(new()
        {
            ["Sample:Count"] = "seven", ["Sample:Wait"] = "soon", ["Sample:Mode"] = "slow", ["Sample:Nested:Flag"] = "yes",
            ["Sample:Items:0:Flag"] = "no", ["Sample:Limit"] = "lots",
        });

        // In the configuration's order of keys.
        Assert.Equal("Sample:Count 'seven' cannot be read; expected a whole number between 1 and 10. "
                     + "Sample:Items:0:Flag 'no' cannot be read; expected true or false. "
                     + "Sample:Limit 'lots' cannot be read; expected a whole number. "
                     + "Sample:Mode 'slow' cannot be read; expected one of Normal, Fast. "
                     + "Sample:Nested:Flag 'yes' cannot be read; expected true or false. "
                     + "Sample:Wait 'soon' cannot be read; expected a duration as [d.]hh:mm:ss[.fff] (00:00:30 is 30 seconds) between 00:00:00.100 and 1.00:00:00.", message);
    }

    [Fact]
    public void A_value_out_of_range_names_the_key_and_the_range_not_the_class()
    {
        Assert.Equal("Sample:Count must be between 1 and 10 (it is 11).", Bind<SampleOptions>(new() { ["Sample:Count"] = "11" }).Message);
        Assert.Equal("Sample:Wait must be between 00:00:00.100 and 1.00:00:00 (it is 00:00:00.050).",
            Bind<SampleOptions>(new() { ["Sample:Wait"] = "00:00:00.050" }).Message);
        Assert.Equal("Sample:Size must be at least 1024 (it is 10).", Bind<SampleOptions>(new() { ["Sample:Size"] = "10" }).Message);
    }

    public enum SampleMode
    {
        Normal,
        Fast,
    }

    public sealed class SampleOptions
    {
        [Range(1, 10)]
        public int Count { get; set; } = 1;

        [Range(typeof(TimeSpan), "00:00:00.100", "1.00:00:00")]
        public TimeSpan Wait { get; set; } = TimeSpan.FromSeconds(1);

        public SampleMode Mode { get; set; }

        public int? Limit { get; set; }

        [Range(1024, long.MaxValue)]
        public long Size { get; set; } = 2048;

        public SampleNested Nested { get; set; } = new();

        public IList<SampleNested> Items { get; } = [];

        public IDictionary<string, IList<string>> Map { get; } = new Dictionary<string, IList<string>>();
    }

    public sealed class SampleNested
    {
        public bool Flag { get; set; }
    }
}
