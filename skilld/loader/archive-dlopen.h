/* libarchive, loaded on first use. Only `.skill` archives, folder inputs and packaging need it,
 * yet linking it makes every start of skillctl and skilld map it and everything it pulls in
 * (libxml2, ICU, libstdc++, libacl, nettle and five compressors): about half the start-up of a
 * run of a plain folder. The headers still give the types and constants; the functions are
 * reached through the sym_* pointers below, all of them resolved together by
 * dlopen_libarchive(), or none. */
#pragma once

#include <archive.h>
#include <archive_entry.h>

#define ARCHIVE_DLSYM(name) extern typeof(name) *sym_##name

ARCHIVE_DLSYM(archive_entry_filetype);
ARCHIVE_DLSYM(archive_entry_free);
ARCHIVE_DLSYM(archive_entry_hardlink);
ARCHIVE_DLSYM(archive_entry_is_encrypted);
ARCHIVE_DLSYM(archive_entry_mode);
ARCHIVE_DLSYM(archive_entry_new);
ARCHIVE_DLSYM(archive_entry_pathname);
ARCHIVE_DLSYM(archive_entry_set_filetype);
ARCHIVE_DLSYM(archive_entry_set_gid);
ARCHIVE_DLSYM(archive_entry_set_mtime);
ARCHIVE_DLSYM(archive_entry_set_pathname);
ARCHIVE_DLSYM(archive_entry_set_perm);
ARCHIVE_DLSYM(archive_entry_set_size);
ARCHIVE_DLSYM(archive_entry_set_uid);
ARCHIVE_DLSYM(archive_entry_symlink);
ARCHIVE_DLSYM(archive_error_string);
ARCHIVE_DLSYM(archive_format);
ARCHIVE_DLSYM(archive_read_data_block);
ARCHIVE_DLSYM(archive_read_free);
ARCHIVE_DLSYM(archive_read_new);
ARCHIVE_DLSYM(archive_read_next_header);
ARCHIVE_DLSYM(archive_read_open1);
ARCHIVE_DLSYM(archive_read_set_callback_data);
ARCHIVE_DLSYM(archive_read_set_read_callback);
ARCHIVE_DLSYM(archive_read_set_seek_callback);
ARCHIVE_DLSYM(archive_read_set_skip_callback);
ARCHIVE_DLSYM(archive_read_support_format_zip_seekable);
ARCHIVE_DLSYM(archive_set_error);
ARCHIVE_DLSYM(archive_write_close);
ARCHIVE_DLSYM(archive_write_data);
ARCHIVE_DLSYM(archive_write_free);
ARCHIVE_DLSYM(archive_write_header);
ARCHIVE_DLSYM(archive_write_new);
ARCHIVE_DLSYM(archive_write_open_fd);
ARCHIVE_DLSYM(archive_write_set_bytes_in_last_block);
ARCHIVE_DLSYM(archive_write_set_format_zip);
ARCHIVE_DLSYM(archive_write_zip_set_compression_deflate);

#undef ARCHIVE_DLSYM

/* Loads libarchive and resolves every sym_* above, once per process (skilld and skillctl are
 * single-threaded). Returns 0, or -EOPNOTSUPP with a sentence in *error saying what is missing
 * and which package brings it; a failed load is retried on the next call. */
int dlopen_libarchive(char **error);
