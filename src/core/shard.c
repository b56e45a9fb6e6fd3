/* Key routing for sharded filters (sbloom_shard): which of n shards a hash belongs to. */
#include "core.h"

/* Bits of the hash that do not choose the block: the block index is the multiply-high of the
 * top 32 bits, and the bits inside the block come from the low 32 times fixed salts, so every
 * bit of the hash is spoken for. A shard taken from any of them sends each shard's filter a
 * biased slice of blocks or bit patterns (routing by the top 3 bits fills an eighth of each
 * shard's blocks). The shard is instead the multiply-high of a full 64-bit avalanche of the hash
 * (XXH3's), whose every output bit depends on every input bit. */
uint32_t sbloom_shard(uint64_t hash, uint32_t nshards)
{
    uint64_t h = hash ^ (hash >> 37);
    h *= UINT64_C(0x165667919E3779F9);
    h ^= h >> 32;
    return (uint32_t)(((h >> 32) * nshards) >> 32);
}
