using System.Globalization;
using System.Net;
using System.Text;
using LLRP.Exchanges;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Context;

/// <summary>The client connection's addresses (for X-Forwarded-For), computed on first use once per connection.</summary>
internal sealed class ConnectionFeature : IHttpConnectionFeature
{
    // The connection's address bytes and number, from its exchange: the exchange of an HTTP/1.1 connection is reused,
    // so these are the same objects request after request and the strings below are made once per connection.
    private byte[]? _forwardedForBytes;
    private int _index;
    private string? _id;
    private IPAddress? _remote;
    private bool _remoteSet;
    private string? _forwardedFor;

    public void Bind(Exchange exchange)
    {
        if (ReferenceEquals(exchange.ForwardedFor, _forwardedForBytes) && exchange.ConnectionIndex == _index)
        {
            return;
        }
        _forwardedForBytes = exchange.ForwardedFor;
        _index = exchange.ConnectionIndex;
        _id = null;
        _remote = null;
        _remoteSet = false;
        _forwardedFor = null;
    }

    public string ConnectionId
    {
        get => _id ??= _forwardedForBytes is null ? "" : _index.ToString(CultureInfo.InvariantCulture);
        set => _id = value;
    }

    public IPAddress? RemoteIpAddress
    {
        get
        {
            if (!_remoteSet && _forwardedForBytes is not null)
            {
                _remoteSet = true;
                _remote = IPAddress.TryParse(Encoding.ASCII.GetString(_forwardedForBytes), out var address) ? address : null;
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
