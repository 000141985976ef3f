using WorkflowService.Engine.Schedules;

namespace WorkflowService.UnitTests.Schedules;

/// <summary>The business key each occurrence starts with, and the templates refused before a schedule is stored.</summary>
public sealed class BusinessKeyTemplateTests
{
    private static readonly DateTime Fire = new(2027, 3, 28, 1, 0, 0, DateTimeKind.Utc);
    private static readonly Guid Id = Guid.Parse("0193a4a0-0000-7000-8000-000000000001");

    [Fact]
    public void The_default_key_is_the_name_and_the_fire_time_in_utc()
    {
        Assert.Equal("nightly-20270328T010000Z", BusinessKeyTemplate.Render(BusinessKeyTemplate.Default, Id, "nightly", Fire));
        Assert.Equal($"{Id}/2027-03-28", BusinessKeyTemplate.Render("{scheduleId}/{fireTime:yyyy-MM-dd}", Id, "nightly", Fire));
    }

    [Theory]
    [InlineData("{scheduleName}", "must hold {fireTime}")]
    [InlineData("{fireTime}-{owner}", "unknown placeholder {owner}")]
    [InlineData("{fireTime", "never closed")]
    [InlineData("x}{fireTime}", "closes no placeholder")]
    public void A_template_that_cannot_address_each_occurrence_is_refused(string template, string expected)
    {
        Assert.Contains(expected, BusinessKeyTemplate.Problem(template, "nightly"), StringComparison.Ordinal);
    }

    [Fact]
    public void A_template_whose_keys_are_too_long_is_refused()
    {
        Assert.Contains("a business key has 1 to 200", BusinessKeyTemplate.Problem(new string('k', 190) + "{fireTime}", "n"), StringComparison.Ordinal);
        Assert.Null(BusinessKeyTemplate.Problem("{scheduleName}:{fireTime:yyyyMMddHHmm}", "nightly"));
    }

    [Fact]
    public void A_template_whose_keys_hold_a_control_character_is_refused() =>
        Assert.Contains("control characters", BusinessKeyTemplate.Problem("night\n{fireTime}", "n"), StringComparison.Ordinal);
}
