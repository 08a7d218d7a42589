// The ranks other than 0 of a split model follow rank 0's batches. Rank 0 owns everything that
// decides what runs (the server, scheduler, block tables, sampler); before each forward pass it
// broadcasts a plan: the batch, the KV cache it runs on (its shape, the block copies and table
// changes since the last plan, the caches destroyed since), the layers and the thread count. The
// other ranks keep mirror caches with the same block numbering and run the batch on their heads.
#pragma once

#include <cstdint>

#include "kv/kv_cache.h"
#include "model/batch.h"
#include "parallel/communicator.h"

namespace brisk {

struct Model;

// Rank 0: sends the batch about to run (Forward::run calls it).
void send_plan(Communicator& comm, const Batch& b, KvCache& cache, int n_layers, int threads);
// Ranks 1..: runs rank 0's plans on this rank's share of the model until rank 0 ends the job.
void follow_plans(const Model& m);
// Every rank, once, at the end of the job: rank 0 tells the others there is no more work; the
// others, unless follow_plans already saw that, wait for it (so no rank finishes while another
// still sends to it).
void end_plans(Communicator& comm);
// Every rank, after loading: aborts the job (naming the rank) unless every rank loaded the same
// model file, in the same way.
void check_same_model(const Model& m);

}  // namespace brisk
