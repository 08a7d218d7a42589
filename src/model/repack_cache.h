// Interleaved weights kept between runs. Repacking a model's matrices (ops/repack.h) writes a copy
// as large as the weights into fresh memory; on this kind of machine most of that time is the
// kernel handing out zeroed pages (a 2.2 GB F16 model: 2-3.6 s to start, where a program reading
// the file's pages in place takes 0.5 s). So the first start also writes the copy to a file in
// the cache directory, and later starts map that file as they would map the model: its pages come
// from the page cache, shared with every process that maps it, and are read in once.
//
// A cache file belongs to one model file and one way of splitting it: it is named after the model
// and the split, and its header holds a key over the model's size, modification time and first
// bytes, the repacked tensors (name, type, shape, rank's share), and the layouts themselves (a
// group of every repacked type, repacked now and hashed, so a program whose layouts changed never
// reads an older program's file). A file whose header or size does not match is not used, and is
// replaced. Files are written whole under a temporary name and renamed, so a reader never sees a
// part of one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/tensor.h"
#include "model/split.h"

namespace brisk {

class ThreadPool;

struct RepackCacheOptions {
  std::string dir;  // where the files live; empty: no cache
  // Smaller sets of matrices repack in a blink: not worth a file (and a test's tiny models never
  // write one unless they ask).
  uint64_t min_bytes = uint64_t{256} << 20;
  // Told (on the writing thread) why a copy could not be kept; the model loads all the same.
  std::function<void(const std::string&)> on_error;
};

class RepackCache {
 public:
  // The cache for these matrices of this model (todo: the matrices to repack, in order; offsets:
  // where each goes in the copy of `total` bytes). Disabled when opt.dir is empty or the copy is
  // smaller than opt.min_bytes.
  RepackCache(const ModelFile& mf, const Split& split, const std::vector<Tensor*>& todo,
              const std::vector<uint64_t>& offsets, uint64_t total, const RepackCacheOptions& opt);

  bool enabled() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // Reads the matching file's copy (total bytes) into `copy`; false when there is none, it does
  // not match or it cannot be read (the caller regroups then, and the file is written again).
  bool read(uint8_t* copy, ThreadPool& pool) const;
  // Writes the copy (total bytes at copy); returns "" or why the file could not be written.
  std::string write(const uint8_t* copy) const;
  // The same on a thread of its own, so that the first start does not wait for the disk; the
  // handle's destructor waits for the file to be whole (a model unloaded sooner still leaves it
  // for the next start). Failures go to on_error.
  std::shared_ptr<const void> write_in_background(
      std::shared_ptr<const uint8_t> copy, std::function<void(const std::string&)> on_error) const;

 private:
  std::string path_, family_;  // family_: the file name's prefix shared by older keys
  uint64_t key_ = 0, total_ = 0;
  std::vector<uint8_t> header() const;
};

}  // namespace brisk
