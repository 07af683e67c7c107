using System.Globalization;
using System.Net;
using System.Text;
using LLRP.Connections;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Context;

/// <summary>The client connection's addresses (for X-Forwarded-For), computed on first use once per connection.</summary>
internal sealed class ConnectionFeature : IHttpConnectionFeature
{
    private ProxyConnection? _connection;
    private string? _id;
    private IPAddress? _remote;
    private bool _remoteSet;
    private string? _forwardedFor;

    public void Bind(ProxyConnection connection)
    {
        if (ReferenceEquals(connection, _connection))
        {
            return;
        }
        _connection = connection;
        _id = null;
        _remote = null;
        _remoteSet = false;
        _forwardedFor = null;
    }

    public string ConnectionId
    {
        get => _id ??= _connection?.Index.ToString(CultureInfo.InvariantCulture) ?? "";
        set => _id = value;
    }

    public IPAddress? RemoteIpAddress
    {
        get
        {
            if (!_remoteSet && _connection is not null)
            {
                _remoteSet = true;
                _remote = IPAddress.TryParse(Encoding.ASCII.GetString(_connection.ForwardedFor), out var address) ? address : null;
            }
            return _remote;
        }
        set
        {
            _remote = value;
            _remoteSet = true;
            _forwardedFor = null;
        }
    }

    /// <summary>The client's element of X-Forwarded-For: <see cref="RemoteIpAddress"/> as text, made once per connection.</summary>
    public string ForwardedFor => _forwardedFor ??= RemoteIpAddress?.ToString() ?? "unknown";

    public IPAddress? LocalIpAddress { get; set; }
    public int RemotePort { get; set; }
    public int LocalPort { get; set; }
}
