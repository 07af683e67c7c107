using System.Collections;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Context;

/// <summary>
/// The feature collection behind <see cref="ProxyHttpContext"/>: a fixed slot for each feature the proxy provides
/// (found by a short type comparison, no dictionary) and a small list for whatever a consumer adds (DefaultHttpContext
/// adds Items and friends lazily, YARP adds its error feature). Per connection; <see cref="Reset"/> per request.
/// </summary>
internal sealed class ProxyFeatureCollection : IFeatureCollection
{
    // The slot order is the lookup order: the most used first.
    private static readonly Type[] s_slotTypes =
    [
        typeof(IHttpRequestFeature),
        typeof(IHttpResponseFeature),
        typeof(IHttpResponseBodyFeature),
        typeof(IHttpRequestBodyDetectionFeature),
        typeof(IHttpRequestLifetimeFeature),
        typeof(IHttpConnectionFeature),
        typeof(IHttpResponseTrailersFeature),
        typeof(IHttpUpgradeFeature),
    ];

    private readonly object[] _defaults;
    private readonly object?[] _slots;
    private List<KeyValuePair<Type, object>>? _extra;
    private int _revision;
    private bool _changed;

    public ProxyFeatureCollection(
        IHttpRequestFeature request,
        IHttpResponseFeature response,
        IHttpResponseBodyFeature responseBody,
        IHttpRequestBodyDetectionFeature bodyDetection,
        IHttpRequestLifetimeFeature lifetime,
        IHttpConnectionFeature connection,
        IHttpResponseTrailersFeature trailers,
        IHttpUpgradeFeature upgrade)
    {
        _defaults = [request, response, responseBody, bodyDetection, lifetime, connection, trailers, upgrade];
        _slots = (object?[])_defaults.Clone();
    }

    public bool IsReadOnly => false;

    /// <summary>Changes whenever a feature is set, so DefaultHttpContext drops the feature references it cached.</summary>
    public int Revision => _revision;

    public object? this[Type key]
    {
        get
        {
            var slot = Slot(key);
            if (slot >= 0)
            {
                return _slots[slot];
            }
            if (_extra is not null)
            {
                foreach (var (type, feature) in _extra)
                {
                    if (type == key)
                    {
                        return feature;
                    }
                }
            }
            return null;
        }
        set
        {
            ArgumentNullException.ThrowIfNull(key);
            _revision++;
            _changed = true;
            var slot = Slot(key);
            if (slot >= 0)
            {
                _slots[slot] = value;
                return;
            }
            _extra ??= [];
            var index = _extra.FindIndex(pair => pair.Key == key);
            if (index >= 0)
            {
                _extra.RemoveAt(index);
            }
            if (value is not null)
            {
                _extra.Add(new(key, value));
            }
        }
    }

    public TFeature? Get<TFeature>() => (TFeature?)this[typeof(TFeature)];

    public void Set<TFeature>(TFeature? instance) => this[typeof(TFeature)] = instance;

    /// <summary>Back to the proxy's own features for the next request; the revision moves only if something was set.</summary>
    public void Reset()
    {
        if (!_changed)
        {
            return;
        }
        _changed = false;
        _defaults.CopyTo(_slots, 0);
        _extra?.Clear();
        _revision++;
    }

    public IEnumerator<KeyValuePair<Type, object>> GetEnumerator()
    {
        for (var i = 0; i < _slots.Length; i++)
        {
            if (_slots[i] is { } feature)
            {
                yield return new(s_slotTypes[i], feature);
            }
        }
        if (_extra is not null)
        {
            foreach (var pair in _extra)
            {
                yield return pair;
            }
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    private static int Slot(Type key)
    {
        var types = s_slotTypes;
        for (var i = 0; i < types.Length; i++)
        {
            if (types[i] == key)
            {
                return i;
            }
        }
        return -1;
    }
}
