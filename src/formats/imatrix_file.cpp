#include "formats/imatrix_file.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf.h"

namespace brisk {
namespace {

constexpr const char kSumSuffix[] = ".in_sum2";
constexpr const char kCountSuffix[] = ".counts";

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

// Sums of squares are finite and never negative; anything else would poison the quantizer.
void check_sums(const std::string& path, const std::string& name, const std::vector<float>& v) {
  for (size_t c = 0; c < v.size(); ++c)
    if (!std::isfinite(v[c]) || v[c] < 0)
      fail("{}: '{}': channel {} has an invalid sum of squares {}", path, name, c, v[c]);
}

std::vector<float> f32_values(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.elements()));
  std::memcpy(v.data(), t.data, v.size() * sizeof(float));
  return v;
}

Imatrix read_gguf_imatrix(const std::string& path) {
  const ModelFile f = load_gguf(path);
  if (f.get_str("general.type").value_or("") != "imatrix")
    fail("{}: not an importance matrix (general.type is not \"imatrix\")", path);
  Imatrix m;
  if (const Value* d = f.find("imatrix.datasets"))
    for (const Value& v : d->arr) m.datasets.push_back(v.s);
  m.chunk_count = static_cast<uint32_t>(f.get_int("imatrix.chunk_count").value_or(0));
  m.chunk_size = static_cast<uint32_t>(f.get_int("imatrix.chunk_size").value_or(0));
  for (const Tensor& t : f.tensors) {
    if (!ends_with(t.name, kSumSuffix)) continue;
    const std::string name = t.name.substr(0, t.name.size() - std::strlen(kSumSuffix));
    const Tensor* c = f.tensor(name + kCountSuffix);
    if (!c) fail("{}: '{}' has no '{}{}'", path, t.name, name, kCountSuffix);
    if (t.type != DType::F32 || c->type != DType::F32)
      fail("{}: '{}' and its counts must be F32", path, t.name);
    // One matrix per entry: the experts of mixture-of-experts models are not brisk's.
    if (t.rows() != 1 || c->elements() != 1)
      fail("{}: '{}' holds {} matrices; brisk reads entries of one", path, t.name, t.rows());
    ImatrixEntry e;
    e.sum_sq = f32_values(t);
    e.count = f32_values(*c)[0];
    check_sums(path, name, e.sum_sq);
    // A count of tokens: none (an entry without data) or at least one.
    if (!std::isfinite(e.count) || e.count < 0 || (e.count > 0 && e.count < 1))
      fail("{}: '{}' has an invalid count {}", path, name, e.count);
    m.entries[name] = std::move(e);
  }
  if (m.entries.empty()) fail("{}: no entries", path);
  return m;
}

// Reads little-endian fields from the legacy layout, failing at the end of the file.
struct Reader {
  const uint8_t* p;
  uint64_t left;
  const std::string& path;
  int32_t i32(const char* what) {
    if (left < 4) fail("{}: truncated at {}", path, what);
    int32_t v;
    std::memcpy(&v, p, 4);
    p += 4, left -= 4;
    return v;
  }
  std::string bytes(uint64_t n, const char* what) {
    if (left < n) fail("{}: truncated at {}", path, what);
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n, left -= n;
    return s;
  }
};

// int32 entries; per entry: int32 name length, name, int32 ncall, int32 nval, nval floats (each
// channel's mean square times ncall); then int32 chunks and int32 length + dataset name.
Imatrix read_dat_imatrix(const std::string& path) {
  const auto file = MappedFile::open(path);
  Reader r{file->data(), file->size(), path};
  const int32_t n = r.i32("the entry count");
  if (n <= 0 || static_cast<uint64_t>(n) > file->size() / 12)
    fail("{}: entry count {} is out of range", path, n);
  Imatrix m;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t len = r.i32("a name length");
    if (len <= 0 || len > 4096) fail("{}: entry {}: name length {} is out of range", path, i, len);
    std::string name = r.bytes(static_cast<uint64_t>(len), "a name");
    const int32_t ncall = r.i32("a call count");
    const int32_t nval = r.i32("a value count");
    if (nval <= 0 || static_cast<uint64_t>(nval) > r.left / 4)
      fail("{}: '{}': value count {} is out of range", path, name, nval);
    ImatrixEntry e;
    e.sum_sq.resize(static_cast<size_t>(nval));
    std::memcpy(e.sum_sq.data(), r.p, static_cast<size_t>(nval) * 4);
    r.p += static_cast<uint64_t>(nval) * 4, r.left -= static_cast<uint64_t>(nval) * 4;
    check_sums(path, name, e.sum_sq);
    // Stored as mean * ncall: as a sum over ncall "tokens" it means the same.
    e.count = static_cast<float>(ncall > 0 ? ncall : 1);
    m.entries[std::move(name)] = std::move(e);
  }
  if (r.left >= 4) {
    const int32_t chunks = r.i32("the chunk count");
    m.chunk_count = chunks > 0 ? static_cast<uint32_t>(chunks) : 0;
    if (r.left >= 4) {
      const int32_t len = r.i32("the dataset name length");
      if (len > 0 && static_cast<uint64_t>(len) <= r.left)
        m.datasets.push_back(r.bytes(static_cast<uint64_t>(len), "the dataset name"));
    }
  }
  return m;
}

}  // namespace

std::map<std::string, std::vector<float>> Imatrix::importance() const {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, e] : entries) {
    std::vector<float> v(e.sum_sq.size());
    for (size_t c = 0; c < v.size(); ++c) v[c] = e.count > 0 ? e.sum_sq[c] / e.count : 1.0f;
    out[name] = std::move(v);
  }
  return out;
}

Imatrix read_imatrix(const std::string& path) {
  return is_gguf(path) ? read_gguf_imatrix(path) : read_dat_imatrix(path);
}

void write_imatrix(const std::string& path, const Imatrix& m) {
  std::map<std::string, Value> meta;
  meta["general.type"] = Value::of_str("imatrix");
  std::vector<Value> ds;
  for (const auto& d : m.datasets) ds.push_back(Value::of_str(d));
  meta["imatrix.datasets"] = Value::of_array(GgufType::STRING, std::move(ds));
  meta["imatrix.chunk_count"] = Value::of_u32(m.chunk_count);
  meta["imatrix.chunk_size"] = Value::of_u32(m.chunk_size);
  std::vector<Tensor> tensors;
  for (const auto& [name, e] : m.entries) {
    Tensor s;
    s.name = name + kSumSuffix;
    s.type = DType::F32;
    s.n_dims = 2;
    s.ne = {static_cast<int64_t>(e.sum_sq.size()), 1, 1, 1};
    s.data = e.sum_sq.data();
    s.nbytes = e.sum_sq.size() * sizeof(float);
    Tensor c;
    c.name = name + kCountSuffix;
    c.type = DType::F32;
    c.n_dims = 2;
    c.ne = {1, 1, 1, 1};
    c.data = &e.count;
    c.nbytes = sizeof(float);
    tensors.push_back(s);
    tensors.push_back(c);
  }
  write_gguf(path, meta, tensors);
}

}  // namespace brisk
