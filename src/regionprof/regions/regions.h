/* regionprof C API: regions and run markers as NVTX ranges in the domain `regionprof`.
 *
 *   regionprof_region_handle parse = regionprof_region_register("region", "parse");
 *   regionprof_region_push(parse);  ...  regionprof_region_pop();
 *
 * Define REGIONPROF_DISABLE to compile every call to nothing. Link regionprof::nvtx_regions. */
#ifndef REGIONPROF_REGIONS_H
#define REGIONPROF_REGIONS_H

#ifdef __cplusplus
extern "C" {
#endif

/** A region name registered once with NVTX (`<kind>:<name>`); valid until the process exits. */
typedef const struct regionprof_region_opaque* regionprof_region_handle;

#ifndef REGIONPROF_DISABLE
/** Registers `<kind>:<name>` once; the same kind and name give the same handle. Never returns NULL. */
regionprof_region_handle regionprof_region_register(const char* kind, const char* name);
/** Opens a registered region on the calling thread. */
void regionprof_region_push(regionprof_region_handle region);
/** Opens region `<kind>:<name>` without registering it (the name is copied by the tool, if any). */
void regionprof_region_push_name(const char* kind, const char* name);
/** Closes the innermost regionprof range open on the calling thread (a region or a run). */
void regionprof_region_pop(void);
/** Opens the run marker `regionprof.profiled_run`; close it with regionprof_region_pop(). */
void regionprof_run_push(void);
/** Starts a registered region that may end on another thread, or out of nesting order (an NVTX
 *  start/end range); returns its id for regionprof_region_end (0 when nothing records). */
unsigned long long regionprof_region_start(regionprof_region_handle region);
/** Ends a region started by regionprof_region_start, on any thread; 0 is ignored. */
void regionprof_region_end(unsigned long long id);
#else
#define regionprof_region_register(kind, name) ((regionprof_region_handle)0)
#define regionprof_region_push(region) ((void)0)
#define regionprof_region_push_name(kind, name) ((void)0)
#define regionprof_region_pop() ((void)0)
#define regionprof_run_push() ((void)0)
#define regionprof_region_start(region) (0ULL)
#define regionprof_region_end(id) ((void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif /* REGIONPROF_REGIONS_H */
