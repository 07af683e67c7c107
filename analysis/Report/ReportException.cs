namespace LLRP.Analysis;

/// <summary>Input the report cannot use; the message names the file and what is wrong with it.</summary>
internal sealed class ReportException(string message) : Exception(message);
