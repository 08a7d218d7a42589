#include "formats/gguf.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/utf8.h"

namespace brisk {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr int kMaxDepth = 4;             // nested arrays deeper than this are not real files
constexpr int kMaxDims = 4;

class Reader {
 public:
  Reader(const std::string& path, const uint8_t* data, uint64_t size, uint32_t version)
      : path_(path), p_(data), size_(size), version_(version) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  void seek(uint64_t p) { pos_ = p; }

  template <typename T>
  T read(const char* what) {
    if (remaining() < sizeof(T))
      fail("{}: truncated file while reading {} at offset {}", path_, what, pos_);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // Counts and lengths are 32-bit in GGUF v1 and 64-bit later.
  uint64_t read_count(const char* what) {
    return version_ == 1 ? read<uint32_t>(what) : read<uint64_t>(what);
  }
  std::string read_string(const char* what) {
    const uint64_t n = read_count(what);
    if (n > remaining())
      fail("{}: {} length {} at offset {} runs past the end of the file", path_, what, n, pos_);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }

  Value read_value(GgufType t, const std::string& key, int depth) {
    Value v;
    v.type = t;
    switch (t) {
      case GgufType::U8:
        v.u = read<uint8_t>(key.c_str());
        break;
      case GgufType::I8:
        v.i = read<int8_t>(key.c_str());
        break;
      case GgufType::U16:
        v.u = read<uint16_t>(key.c_str());
        break;
      case GgufType::I16:
        v.i = read<int16_t>(key.c_str());
        break;
      case GgufType::U32:
        v.u = read<uint32_t>(key.c_str());
        break;
      case GgufType::I32:
        v.i = read<int32_t>(key.c_str());
        break;
      case GgufType::U64:
        v.u = read<uint64_t>(key.c_str());
        break;
      case GgufType::I64:
        v.i = read<int64_t>(key.c_str());
        break;
      case GgufType::F32:
        v.f = read<float>(key.c_str());
        break;
      case GgufType::F64:
        v.f = read<double>(key.c_str());
        break;
      case GgufType::BOOL: {
        const uint8_t b = read<uint8_t>(key.c_str());
        if (b > 1) fail("{}: metadata key '{}': bool value {} is neither 0 nor 1", path_, key, b);
        v.u = b;
        break;
      }
      case GgufType::STRING:
        v.s = read_string(key.c_str());
        break;
      case GgufType::ARRAY: {
        if (depth >= kMaxDepth) fail("{}: metadata key '{}': arrays nested too deeply", path_, key);
        const uint32_t et = read<uint32_t>(key.c_str());
        if (et > static_cast<uint32_t>(GgufType::F64))
          fail("{}: metadata key '{}': unknown array element type {}", path_, key, et);
        v.elem_type = static_cast<GgufType>(et);
        const uint64_t n = read_count(key.c_str());
        // Every element takes at least one byte (a string or array at least its length field), so
        // a count larger than the bytes left is a corrupt file, caught before any allocation.
        if (n > remaining())
          fail("{}: metadata key '{}': array of {} elements cannot fit in the {} bytes left", path_,
               key, n, remaining());
        v.arr.reserve(n);
        for (uint64_t k = 0; k < n; ++k) v.arr.push_back(read_value(v.elem_type, key, depth + 1));
        break;
      }
      default:
        fail("{}: metadata key '{}': unknown value type {}", path_, key, static_cast<uint32_t>(t));
    }
    return v;
  }

 private:
  const std::string& path_;
  const uint8_t* p_;
  uint64_t size_;
  uint64_t pos_ = 0;
  uint32_t version_;
};

}  // namespace

bool is_gguf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  uint32_t m = 0;
  return f.read(reinterpret_cast<char*>(&m), 4) && m == kMagic;
}

namespace {

// The magic and version, checked before anything else is read.
uint32_t check_header(const std::string& path, const uint8_t* data, uint64_t size) {
  if (size < 8) fail("{}: not a GGUF file (only {} bytes)", path, size);
  uint32_t magic, version;
  std::memcpy(&magic, data, 4);
  std::memcpy(&version, data + 4, 4);
  if (magic != kMagic) {
    if (magic == 0x47475546) fail("{}: big-endian GGUF files are not supported", path);
    fail("{}: not a GGUF file (bad magic)", path);
  }
  // A big-endian v3 file reads as version 0x03000000 here.
  if (version == 0 || version > 3) fail("{}: unsupported GGUF version {}", path, version);
  return version;
}

void read_metadata(Reader& r, const std::string& path, uint64_t n_kv, ModelFile& mf) {
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key = r.read_string("metadata key");
    if (key.empty()) fail("{}: metadata entry {} has an empty key", path, k);
    if (!utf8_valid(key)) fail("{}: metadata entry {} has a key that is not valid UTF-8", path, k);
    const uint32_t t = r.read<uint32_t>("metadata value type");
    if (t > static_cast<uint32_t>(GgufType::F64))
      fail("{}: metadata key '{}' has unknown value type {}", path, key, t);
    Value v = r.read_value(static_cast<GgufType>(t), key, 0);
    if (!mf.meta.emplace(key, std::move(v)).second)
      fail("{}: duplicate metadata key '{}'", path, key);
  }
}

uint64_t alignment_of(const ModelFile& mf) {
  const Value* a = mf.find("general.alignment");
  if (!a) return 32;
  auto al = a->as_int();
  if (!al || *al <= 0 || *al > 65536 || (*al & (*al - 1)) != 0)
    fail("{}: general.alignment must be a power of two up to 65536", mf.path);
  return static_cast<uint64_t>(*al);
}

// Tensor k's name, shape and type, with its data's offset in the data section.
Tensor read_tensor_info(Reader& r, const std::string& path, uint32_t version, uint64_t alignment,
                        uint64_t k, uint64_t& offset) {
  Tensor t;
  t.name = r.read_string("tensor name");
  if (t.name.empty() || t.name.size() > 256 || !utf8_valid(t.name))
    fail("{}: tensor {} has an invalid name", path, k);
  const uint32_t nd = r.read<uint32_t>("tensor dimension count");
  if (nd == 0 || nd > kMaxDims)
    fail("{}: tensor '{}' has {} dimensions (1 to 4 allowed)", path, t.name, nd);
  t.n_dims = static_cast<int>(nd);
  uint64_t elems = 1;
  for (uint32_t d = 0; d < nd; ++d) {
    const uint64_t ne =
        version == 1 ? r.read<uint32_t>("tensor dimension") : r.read<uint64_t>("tensor dimension");
    if (ne == 0 || ne > (uint64_t{1} << 40))
      fail("{}: tensor '{}' has an invalid dimension {}", path, t.name, ne);
    t.ne[d] = static_cast<int64_t>(ne);
    elems = checked_mul(elems, ne, fmt::format("{}: tensor '{}' element count", path, t.name));
  }
  if (elems > (uint64_t{1} << 42))
    fail("{}: tensor '{}' has an absurd element count {}", path, t.name, elems);
  const uint32_t type = r.read<uint32_t>("tensor type");
  auto info = dtype_info(type);
  if (!info) fail("{}: tensor '{}' has unknown type id {}", path, t.name, type);
  t.type = info->type;
  auto row = dtype_row_bytes(t.type, static_cast<uint64_t>(t.ne[0]));
  if (!row)
    fail("{}: tensor '{}' row length {} is not a multiple of the {} block size {}", path, t.name,
         t.ne[0], info->name, info->block_elems);
  t.nbytes = checked_mul(*row, elems / static_cast<uint64_t>(t.ne[0]),
                         fmt::format("{}: tensor '{}' size", path, t.name));
  offset = r.read<uint64_t>("tensor offset");
  if (offset % alignment != 0)
    fail("{}: tensor '{}' offset {} is not aligned to {}", path, t.name, offset, alignment);
  return t;
}

// Points every tensor at its data: each inside the file, none overlapping another, names unique.
void place_tensors(ModelFile& mf, std::vector<std::pair<uint64_t, size_t>> offsets,
                   const uint8_t* data, uint64_t size, uint64_t data_start) {
  const std::string& path = mf.path;
  std::vector<std::string> names;
  for (const auto& t : mf.tensors) names.push_back(t.name);
  std::sort(names.begin(), names.end());
  auto d = std::adjacent_find(names.begin(), names.end());
  if (d != names.end()) fail("{}: duplicate tensor name '{}'", path, *d);
  if (!mf.tensors.empty() && data_start > size)
    fail("{}: truncated file: tensor data section missing", path);
  const uint64_t data_size = size - std::min(size, data_start);
  std::sort(offsets.begin(), offsets.end());
  uint64_t prev_end = 0;
  const Tensor* prev = nullptr;
  for (const auto& [offset, index] : offsets) {
    Tensor& t = mf.tensors[index];
    const uint64_t end =
        checked_add(offset, t.nbytes, fmt::format("{}: tensor '{}' end", path, t.name));
    if (end > data_size)
      fail("{}: tensor '{}' (offset {}, {} bytes) extends past the end of the file", path, t.name,
           offset, t.nbytes);
    if (prev && offset < prev_end)
      fail("{}: tensors '{}' and '{}' overlap", path, prev->name, t.name);
    t.data = data + data_start + offset;
    prev_end = end;
    prev = &t;
  }
}

}  // namespace

ModelFile load_gguf(const std::string& path) {
  auto file = MappedFile::open(path);
  const uint8_t* data = file->data();
  const uint64_t size = file->size();
  const uint32_t version = check_header(path, data, size);
  Reader r(path, data, size, version);
  r.seek(8);
  const uint64_t n_tensors = r.read_count("tensor count");
  const uint64_t n_kv = r.read_count("metadata count");
  if (n_kv > r.remaining() / 8)
    fail("{}: metadata count {} is impossible for a file of {} bytes", path, n_kv, size);
  if (n_tensors > r.remaining() / 8)
    fail("{}: tensor count {} is impossible for a file of {} bytes", path, n_tensors, size);

  ModelFile mf;
  mf.path = path;
  mf.format = fmt::format("GGUF v{}", version);
  mf.file_bytes = size;
  read_metadata(r, path, n_kv, mf);
  const uint64_t alignment = alignment_of(mf);
  std::vector<std::pair<uint64_t, size_t>> offsets;  // (offset, tensor index)
  for (uint64_t k = 0; k < n_tensors; ++k) {
    uint64_t offset = 0;
    mf.tensors.push_back(read_tensor_info(r, path, version, alignment, k, offset));
    offsets.emplace_back(offset, mf.tensors.size() - 1);
  }
  const uint64_t data_start = (r.pos() + alignment - 1) / alignment * alignment;
  place_tensors(mf, std::move(offsets), data, size, data_start);
  mf.storage.push_back(file);
  return mf;
}

namespace {

class Writer {
 public:
  explicit Writer(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) fail("{}: cannot create file", path);
  }
  ~Writer() {
    if (f_) std::fclose(f_);
  }
  void bytes(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_) != n) fail("{}: write failed", path_);
    pos_ += n;
  }
  template <typename T>
  void put(T v) {
    bytes(&v, sizeof v);
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad_to(uint64_t align) {
    static const uint8_t zeros[64] = {};
    while (pos_ % align) bytes(zeros, std::min<uint64_t>(64, align - pos_ % align));
  }
  void value(const Value& v) {
    switch (v.type) {
      case GgufType::U8:
        put<uint8_t>(static_cast<uint8_t>(v.u));
        break;
      case GgufType::I8:
        put<int8_t>(static_cast<int8_t>(v.i));
        break;
      case GgufType::U16:
        put<uint16_t>(static_cast<uint16_t>(v.u));
        break;
      case GgufType::I16:
        put<int16_t>(static_cast<int16_t>(v.i));
        break;
      case GgufType::U32:
        put<uint32_t>(static_cast<uint32_t>(v.u));
        break;
      case GgufType::I32:
        put<int32_t>(static_cast<int32_t>(v.i));
        break;
      case GgufType::U64:
        put<uint64_t>(v.u);
        break;
      case GgufType::I64:
        put<int64_t>(v.i);
        break;
      case GgufType::F32:
        put<float>(static_cast<float>(v.f));
        break;
      case GgufType::F64:
        put<double>(v.f);
        break;
      case GgufType::BOOL:
        put<uint8_t>(v.u ? 1 : 0);
        break;
      case GgufType::STRING:
        str(v.s);
        break;
      case GgufType::ARRAY:
        put<uint32_t>(static_cast<uint32_t>(v.elem_type));
        put<uint64_t>(v.arr.size());
        for (const auto& e : v.arr) value(e);
        break;
    }
  }
  void close() {
    if (std::fclose(f_) != 0) {
      f_ = nullptr;
      fail("{}: write failed", path_);
    }
    f_ = nullptr;
  }

 private:
  std::string path_;
  std::FILE* f_;
  uint64_t pos_ = 0;
};

}  // namespace

void write_gguf(const std::string& path, const std::map<std::string, Value>& meta,
                const std::vector<Tensor>& tensors, const GgufWriteOptions& opt) {
  write_gguf_streaming(
      path, meta, tensors,
      [&](size_t i, uint8_t* dst) { std::memcpy(dst, tensors[i].data, tensors[i].nbytes); }, opt);
}

void write_gguf_streaming(const std::string& path, const std::map<std::string, Value>& meta,
                          const std::vector<Tensor>& tensors,
                          const std::function<void(size_t, uint8_t*)>& fill,
                          const GgufWriteOptions& opt) {
  // Written to a temporary name and renamed, so a failed write never leaves a half file behind.
  const std::string tmp = path + ".tmp";
  {
    Writer w(tmp);
    w.put<uint32_t>(kMagic);
    w.put<uint32_t>(3);
    w.put<uint64_t>(tensors.size());
    auto m = meta;
    if (opt.alignment != 32) m["general.alignment"] = Value::of_u32(opt.alignment);
    w.put<uint64_t>(m.size());
    for (const auto& [k, v] : m) {
      w.str(k);
      w.put<uint32_t>(static_cast<uint32_t>(v.type));
      w.value(v);
    }
    uint64_t off = 0;
    for (const auto& t : tensors) {
      w.str(t.name);
      w.put<uint32_t>(static_cast<uint32_t>(t.n_dims));
      for (int d = 0; d < t.n_dims; ++d) w.put<uint64_t>(static_cast<uint64_t>(t.ne[d]));
      w.put<uint32_t>(static_cast<uint32_t>(t.type));
      w.put<uint64_t>(off);
      off += (t.nbytes + opt.alignment - 1) / opt.alignment * opt.alignment;
    }
    w.pad_to(opt.alignment);
    std::vector<uint8_t> buf;
    for (size_t i = 0; i < tensors.size(); ++i) {
      buf.resize(tensors[i].nbytes);
      fill(i, buf.data());
      w.bytes(buf.data(), buf.size());
      w.pad_to(opt.alignment);
    }
    w.close();
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("{}: cannot rename temporary file", path);
}

}  // namespace brisk
