// A map kept as one sorted vector of (key, value) pairs: the maps of the models (labels,
// annotations, resource lists, node selectors) hold a handful of entries, and decoding a watch
// event fills several of them. One allocation for the whole map instead of one node per entry,
// and lookups over contiguous memory.
//
// It reads like std::map: iteration in key order yields pairs (.first / .second), find, count,
// contains, at, operator[], insert, emplace, try_emplace, insert_or_assign, erase, ==. Unlike
// std::map, inserting or erasing invalidates iterators and references to other entries, and the
// key of an entry must not be changed through an iterator. It converts to and from std::map, so
// code written against std::map<std::string, V> keeps working (at the price of a copy).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kozmo::k8s {

template <class K, class V>
class flat_map {
public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using storage = std::vector<value_type>;
  using iterator = typename storage::iterator;
  using const_iterator = typename storage::const_iterator;
  using size_type = std::size_t;

  flat_map() = default;
  flat_map(std::initializer_list<value_type> init) {
    items_.reserve(init.size());
    for (auto& kv : init)
      insert_or_assign(kv.first, kv.second);
  }
  template <class It>
  flat_map(It first, It last) {
    insert(first, last);
  }
  // From and to std::map, for code written against it.
  flat_map(const std::map<K, V, std::less<>>& m) : items_(m.begin(), m.end()) {}
  flat_map(const std::map<K, V>& m) : items_(m.begin(), m.end()) {}
  operator std::map<K, V>() const { return std::map<K, V>(items_.begin(), items_.end()); }

  iterator begin() noexcept { return items_.begin(); }
  iterator end() noexcept { return items_.end(); }
  const_iterator begin() const noexcept { return items_.begin(); }
  const_iterator end() const noexcept { return items_.end(); }
  const_iterator cbegin() const noexcept { return items_.begin(); }
  const_iterator cend() const noexcept { return items_.end(); }

  size_type size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }
  void clear() noexcept { items_.clear(); }
  void reserve(size_type n) { items_.reserve(n); }

  // Lookups take anything comparable with the key (a string_view or a literal for string keys).
  template <class Q>
  iterator find(const Q& key) {
    auto it = lower(key);
    return it != items_.end() && !(key < it->first) ? it : items_.end();
  }
  template <class Q>
  const_iterator find(const Q& key) const {
    return const_cast<flat_map*>(this)->find(key);
  }
  template <class Q>
  bool contains(const Q& key) const {
    return find(key) != end();
  }
  template <class Q>
  size_type count(const Q& key) const {
    return contains(key) ? 1 : 0;
  }
  template <class Q>
  V& at(const Q& key) {
    auto it = find(key);
    if (it == items_.end())
      throw std::out_of_range("flat_map::at");
    return it->second;
  }
  template <class Q>
  const V& at(const Q& key) const {
    return const_cast<flat_map*>(this)->at(key);
  }

  V& operator[](const K& key) { return try_emplace(key).first->second; }
  V& operator[](K&& key) { return try_emplace(std::move(key)).first->second; }
  V& operator[](std::string_view key)
    requires(!std::is_same_v<K, std::string_view> && std::is_constructible_v<K, std::string_view>)
  {
    auto it = lower(key);
    if (it == items_.end() || key < it->first)
      it = items_.emplace(it, std::piecewise_construct, std::forward_as_tuple(key), std::tuple<>{});
    return it->second;
  }
  V& operator[](const char* key)
    requires std::is_constructible_v<K, const char*>
  {
    return (*this)[std::string_view(key)];
  }

  template <class Q, class... Args>
  std::pair<iterator, bool> try_emplace(Q&& key, Args&&... args) {
    auto it = lower(key);
    if (it != items_.end() && !(key < it->first))
      return {it, false};
    it = items_.emplace(it, std::piecewise_construct, std::forward_as_tuple(std::forward<Q>(key)),
                        std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }
  template <class Q, class M>
  std::pair<iterator, bool> insert_or_assign(Q&& key, M&& value) {
    auto [it, fresh] = try_emplace(std::forward<Q>(key), std::forward<M>(value));
    if (!fresh)
      it->second = std::forward<M>(value);
    return {it, fresh};
  }
  std::pair<iterator, bool> insert(const value_type& kv) { return try_emplace(kv.first, kv.second); }
  std::pair<iterator, bool> insert(value_type&& kv) { return try_emplace(std::move(kv.first), std::move(kv.second)); }
  template <class It>
  void insert(It first, It last) {
    for (; first != last; ++first)
      try_emplace(first->first, first->second);
  }
  void insert(std::initializer_list<value_type> init) { insert(init.begin(), init.end()); }
  template <class Q, class M>
  std::pair<iterator, bool> emplace(Q&& key, M&& value) {
    return try_emplace(std::forward<Q>(key), std::forward<M>(value));
  }

  iterator erase(const_iterator pos) { return items_.erase(pos); }
  iterator erase(const_iterator first, const_iterator last) { return items_.erase(first, last); }
  template <class Q>
    requires(!std::is_convertible_v<const Q&, const_iterator>)
  size_type erase(const Q& key) {
    auto it = find(key);
    if (it == items_.end())
      return 0;
    items_.erase(it);
    return 1;
  }

  // For decoders filling a fresh map from keys that usually arrive sorted (Go writes map keys
  // in order): appends when the key sorts last, otherwise inserts in place. A repeated key
  // gets its value reset, so that the last one wins. Returns the entry's value.
  V& append_or_reset(std::string_view key) {
    if (items_.empty() || items_.back().first < key) {
      items_.emplace_back(std::piecewise_construct, std::forward_as_tuple(key), std::tuple<>{});
      return items_.back().second;
    }
    auto it = lower(key);
    if (it != items_.end() && !(key < it->first)) {
      it->second = V{};
      return it->second;
    }
    return items_.emplace(it, std::piecewise_construct, std::forward_as_tuple(key), std::tuple<>{})->second;
  }

  // For decoders that have put the keys in order themselves: appends an entry whose key sorts
  // after every key present (the caller guarantees it). Returns the entry's value.
  V& append_in_order(std::string_view key) {
    items_.emplace_back(std::piecewise_construct, std::forward_as_tuple(key), std::tuple<>{});
    return items_.back().second;
  }

  friend bool operator==(const flat_map& a, const flat_map& b) { return a.items_ == b.items_; }
  friend bool operator==(const flat_map& a, const std::map<K, V>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) {
             return x.first == y.first && x.second == y.second;
           });
  }

private:
  template <class Q>
  iterator lower(const Q& key) {
    return std::lower_bound(items_.begin(), items_.end(), key,
                            [](const value_type& kv, const Q& k) { return kv.first < k; });
  }

  storage items_;
};

} // namespace kozmo::k8s
