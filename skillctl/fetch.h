/* Fetching what the service keeps of a run (its artifacts and logs) into local files. The service
 * hands over file descriptors (over SSH, where none pass, chunks of bytes); skillctl writes each file atomically (temporary file, fsync,
 * rename) and only beneath the target directory: no symlink on the way is followed, one in the
 * place of a file is replaced, never written through, and a path from the service that is not a
 * plain relative path is refused. A remote or broken service cannot make skillctl write
 * elsewhere. */
#pragma once

#include "bus-client.h"

/* Opens the directory rel beneath dir_fd one component at a time, creating missing ones when
 * create is set, never following a symlink (-ELOOP) or crossing into a non-directory. */
int open_dir_beneath(int dir_fd, const char *rel, bool create, int *ret_fd);

/* Copies src_fd (from its current offset to EOF) to rel beneath dir_fd. With expected_sha256, a
 * copy that does not hash to it is discarded: -EBADMSG; without, nothing is hashed. Synced before
 * it is renamed into place, unless ret_unsynced_fd is given: then it is renamed at once and its fd
 * returned, for the caller to sync together with others before whatever vouches for it
 * (fsync_many()). */
int copy_fd_to_file_atomic(int src_fd, int dir_fd, const char *rel, const char *expected_sha256,
                           uint64_t *ret_size, int *ret_unsynced_fd);

/* OpenArtifact and OpenLog of run id at object path: a read-only fd of a regular file (or, for a
 * log that is still being written, whatever the service hands out). Over SSH, where no fd passes,
 * a memfd holding what ReadArtifact and ReadLog return, read to the end. Print the error. */
int client_open_artifact(Client *c, const char *id, const char *path, const char *artifact, int *ret_fd);
int client_open_log(Client *c, const char *id, const char *path, const char *stream, int *ret_fd);

/* What skillctl asks ReadLog and ReadArtifact for per call: the service's own cap (4 MiB). */
#define READ_CHUNK_BYTES (4U * 1024 * 1024)

/* Writes what ReadLog has of stream from *offset on to dest, advancing *offset, until a call
 * returns nothing; a dest that fails is marked broken and no longer written. For following a
 * log where no fd passes (over SSH). Prints the error. */
int client_copy_log(Client *c, const char *id, const char *path, const char *stream, uint64_t *offset,
                    int dest, bool *dest_broken);

typedef struct ArtifactInfo {
        char *path;
        uint64_t size;
        char *sha256;                   /* "" when the service does not say */
} ArtifactInfo;

void artifact_info_free_many(ArtifactInfo *a, size_t n);

/* Reads an artifact list (a(sts), as ListArtifacts and GetOutcome return it) from m. */
int artifact_list_read(sd_bus_message *m, ArtifactInfo **ret, size_t *ret_n);

/* ListArtifacts of the run. Prints the error. */
int client_list_artifacts(Client *c, const char *id, const char *path, ArtifactInfo **ret, size_t *ret_n);

/* Fetches the artifacts named in only (NULL: all) into dir_fd, each checked against its hash.
 * Prints each failure and goes on; returns the first error. */
int fetch_artifacts(Client *c, const char *id, const char *path, int dir_fd, char * const *only);
/* As fetch_artifacts(), of a list the caller already has. */
int fetch_artifacts_listed(Client *c, const char *id, const char *path, int dir_fd, const ArtifactInfo *list,
                           size_t n, char * const *only);
