global using Xunit;
global using WorkflowService.Testing.Processes;
