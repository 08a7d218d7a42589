// Downloads from the Hugging Face hub (or anything serving its URL layout): resumable, with a
// progress bar, and atomic — a file appears under its final name only once complete.
#pragma once

#include <string>
#include <vector>

namespace brisk {

// $HF_ENDPOINT, or https://huggingface.co.
std::string hub_endpoint();
// $BRISK_CACHE, else $XDG_CACHE_HOME/brisk, else ~/.cache/brisk.
std::string cache_dir();

// Downloads url to dest unless dest exists; resumes dest + ".part" if present. Throws Error.
void download_file(const std::string& url, const std::string& dest, bool progress = true);

// Lists a hub repository's files (its model API: siblings[].rfilename).
std::vector<std::string> hub_list_files(const std::string& repo);

// Resolves "OWNER/REPO[:FILE-OR-QUANT]" to a local file, downloading it into the cache if needed.
std::string hub_fetch(const std::string& spec, bool progress = true);

}  // namespace brisk
