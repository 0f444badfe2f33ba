/* See archive-dlopen.h. */
#include "archive-dlopen.h"
#include "dlopen-util.h"
#include "error.h"

#define LIBARCHIVE_SONAME "libarchive.so.13"

#define ARCHIVE_DLSYM_DEFINE(name) typeof(name) *sym_##name = NULL

ARCHIVE_DLSYM_DEFINE(archive_entry_filetype);
ARCHIVE_DLSYM_DEFINE(archive_entry_free);
ARCHIVE_DLSYM_DEFINE(archive_entry_hardlink);
ARCHIVE_DLSYM_DEFINE(archive_entry_is_encrypted);
ARCHIVE_DLSYM_DEFINE(archive_entry_mode);
ARCHIVE_DLSYM_DEFINE(archive_entry_new);
ARCHIVE_DLSYM_DEFINE(archive_entry_pathname);
ARCHIVE_DLSYM_DEFINE(archive_entry_set_filetype);
ARCHIVE_DLSYM_DEFINE(archive_entry_set_gid);
ARCHIVE_DLSYM_DEFINE(archive_entry_set_mtime);
ARCHIVE_DLSYM_DEFINE(archive_entry_set_pathname);
ARCHIVE_DLSYM_DEFINE(archive_entry_set_perm);
ARCHIVE_DLSYM_DEFINE(archive_entry_set_size);
ARCHIVE_DLSYM_DEFINE(archive_entry_set_uid);
ARCHIVE_DLSYM_DEFINE(archive_entry_symlink);
ARCHIVE_DLSYM_DEFINE(archive_error_string);
ARCHIVE_DLSYM_DEFINE(archive_format);
ARCHIVE_DLSYM_DEFINE(archive_read_data_block);
ARCHIVE_DLSYM_DEFINE(archive_read_free);
ARCHIVE_DLSYM_DEFINE(archive_read_new);
ARCHIVE_DLSYM_DEFINE(archive_read_next_header);
ARCHIVE_DLSYM_DEFINE(archive_read_open1);
ARCHIVE_DLSYM_DEFINE(archive_read_set_callback_data);
ARCHIVE_DLSYM_DEFINE(archive_read_set_read_callback);
ARCHIVE_DLSYM_DEFINE(archive_read_set_seek_callback);
ARCHIVE_DLSYM_DEFINE(archive_read_set_skip_callback);
ARCHIVE_DLSYM_DEFINE(archive_read_support_format_zip_seekable);
ARCHIVE_DLSYM_DEFINE(archive_set_error);
ARCHIVE_DLSYM_DEFINE(archive_write_close);
ARCHIVE_DLSYM_DEFINE(archive_write_data);
ARCHIVE_DLSYM_DEFINE(archive_write_free);
ARCHIVE_DLSYM_DEFINE(archive_write_header);
ARCHIVE_DLSYM_DEFINE(archive_write_new);
ARCHIVE_DLSYM_DEFINE(archive_write_open_fd);
ARCHIVE_DLSYM_DEFINE(archive_write_set_bytes_in_last_block);
ARCHIVE_DLSYM_DEFINE(archive_write_set_format_zip);
ARCHIVE_DLSYM_DEFINE(archive_write_zip_set_compression_deflate);

/* Where each pointer goes, by name: resolved all together, published only when all are found. */
#define SYM(name) { #name, (void **) &sym_##name }
static const DlopenSymbol symbols[] = {
        SYM(archive_entry_filetype),
        SYM(archive_entry_free),
        SYM(archive_entry_hardlink),
        SYM(archive_entry_is_encrypted),
        SYM(archive_entry_mode),
        SYM(archive_entry_new),
        SYM(archive_entry_pathname),
        SYM(archive_entry_set_filetype),
        SYM(archive_entry_set_gid),
        SYM(archive_entry_set_mtime),
        SYM(archive_entry_set_pathname),
        SYM(archive_entry_set_perm),
        SYM(archive_entry_set_size),
        SYM(archive_entry_set_uid),
        SYM(archive_entry_symlink),
        SYM(archive_error_string),
        SYM(archive_format),
        SYM(archive_read_data_block),
        SYM(archive_read_free),
        SYM(archive_read_new),
        SYM(archive_read_next_header),
        SYM(archive_read_open1),
        SYM(archive_read_set_callback_data),
        SYM(archive_read_set_read_callback),
        SYM(archive_read_set_seek_callback),
        SYM(archive_read_set_skip_callback),
        SYM(archive_read_support_format_zip_seekable),
        SYM(archive_set_error),
        SYM(archive_write_close),
        SYM(archive_write_data),
        SYM(archive_write_free),
        SYM(archive_write_header),
        SYM(archive_write_new),
        SYM(archive_write_open_fd),
        SYM(archive_write_set_bytes_in_last_block),
        SYM(archive_write_set_format_zip),
        SYM(archive_write_zip_set_compression_deflate),
};
#undef SYM

int dlopen_libarchive(char **error) {
        static bool loaded = false;
        int r;

        if (loaded)
                return 0;
        r = dlopen_symbols(LIBARCHIVE_SONAME, symbols, ELEMENTSOF(symbols),
                           ".skill archives and folder inputs need", "libarchive13", "libarchive 3.4", error);
        if (r < 0)
                return r;
        loaded = true;
        return 0;
}
