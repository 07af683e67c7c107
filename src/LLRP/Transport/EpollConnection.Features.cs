using System.Collections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Transport;

/// <summary>
/// The connection is its own feature collection, as Kestrel's socket transport's connection is: the features it
/// implements itself (<see cref="IsOwnFeature"/>) cost no storage, and those others set (Kestrel sets its heartbeat,
/// completion, lifetime-notification and metrics features on every connection) go into one small array, searched
/// from the front. A <see cref="FeatureCollection"/> held ten entries in a dictionary: about 0.5 KiB per connection,
/// idle or not, where this holds four references.
/// </summary>
internal sealed partial class EpollConnection : IFeatureCollection
{
    // Kestrel sets four features on each connection; room for them at the first Set.
    private const int FirstSetCapacity = 4;

    private KeyValuePair<Type, object>[]? _setFeatures;
    private int _setCount;
    private int _revision;

    bool IFeatureCollection.IsReadOnly => false;

    int IFeatureCollection.Revision => _revision;

    object? IFeatureCollection.this[Type key]
    {
        get
        {
            ArgumentNullException.ThrowIfNull(key);
            var index = IndexOf(key);
            if (index >= 0)
            {
                return _setFeatures![index].Value;
            }
            return IsOwnFeature(key) ? this : null;
        }
        set
        {
            ArgumentNullException.ThrowIfNull(key);
            Set(key, value);
        }
    }

    TFeature? IFeatureCollection.Get<TFeature>() where TFeature : default =>
        (TFeature?)((IFeatureCollection)this)[typeof(TFeature)];

    void IFeatureCollection.Set<TFeature>(TFeature? instance) where TFeature : default => Set(typeof(TFeature), instance);

    IEnumerator<KeyValuePair<Type, object>> IEnumerable<KeyValuePair<Type, object>>.GetEnumerator()
    {
        for (var i = 0; i < _setCount; i++)
        {
            yield return _setFeatures![i];
        }
        foreach (var own in OwnFeatures)
        {
            if (IndexOf(own) < 0)
            {
                yield return new KeyValuePair<Type, object>(own, this);
            }
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => ((IEnumerable<KeyValuePair<Type, object>>)this).GetEnumerator();

    private static readonly Type[] OwnFeatures =
    [
        typeof(IConnectionIdFeature),
        typeof(IConnectionTransportFeature),
        typeof(IConnectionItemsFeature),
        typeof(IConnectionLifetimeFeature),
        typeof(IConnectionEndPointFeature),
        typeof(IMemoryPoolFeature),
        typeof(IClientClosedFeature),
        typeof(IHalfCloseFeature),
    ];

    private static bool IsOwnFeature(Type type) => Array.IndexOf(OwnFeatures, type) >= 0;

    private int IndexOf(Type key)
    {
        for (var i = 0; i < _setCount; i++)
        {
            if (_setFeatures![i].Key == key)
            {
                return i;
            }
        }
        return -1;
    }

    /// <summary>
    /// A set feature replaces the connection's own; setting null removes it (and the connection's own shows again). Not
    /// thread-safe, as FeatureCollection is not: Kestrel sets features before the connection's handler runs.
    /// </summary>
    private void Set(Type key, object? value)
    {
        var index = IndexOf(key);
        if (value is null)
        {
            if (index >= 0)
            {
                _setCount--;
                Array.Copy(_setFeatures!, index + 1, _setFeatures!, index, _setCount - index);
                _setFeatures![_setCount] = default;
            }
        }
        else if (index >= 0)
        {
            _setFeatures![index] = new KeyValuePair<Type, object>(key, value);
        }
        else
        {
            if (_setFeatures is null || _setCount == _setFeatures.Length)
            {
                Array.Resize(ref _setFeatures, _setFeatures is null ? FirstSetCapacity : _setFeatures.Length * 2);
            }
            _setFeatures[_setCount++] = new KeyValuePair<Type, object>(key, value);
        }
        _revision++;
    }
}
