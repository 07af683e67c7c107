using System.Diagnostics;

namespace LLRP.Runner.Tests;

public sealed class ProcessGroupsTests
{
    [Fact]
    public void Measured_pid_is_the_child_a_job_announced()
    {
        var log = Path.GetTempFileName();
        try
        {
            using var job = Process.GetCurrentProcess();
            File.WriteAllText(log, "nginx-job: nginx version: nginx/1.22.1, worker_processes 1\n##ChildProcessId:4242\nnginx-job: ready on 127.0.0.1:8080\n");
            Assert.Equal(4242, ProcessGroups.MeasuredPid(job, log));
            // The last announcement counts (a job that ran a tool before its server).
            File.AppendAllText(log, "##ChildProcessId:4343\n");
            Assert.Equal(4343, ProcessGroups.MeasuredPid(job, log));
            // No announcement (the .NET servers), or no log: the job's own process.
            File.WriteAllText(log, "Application started.\n##ChildProcessId:x\n");
            Assert.Equal(job.Id, ProcessGroups.MeasuredPid(job, log));
            Assert.Equal(job.Id, ProcessGroups.MeasuredPid(job, log + ".missing"));
        }
        finally
        {
            File.Delete(log);
        }
    }
}
