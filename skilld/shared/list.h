/* Intrusive doubly linked lists: an item carries its own `prev` and `next`, so it leaves its list
 * in constant time from wherever it is known (a polkit query from its reply, a connection from
 * its disconnect), with no allocation of its own. The head is a plain pointer to the first item.
 * Each argument is evaluated once. */
#pragma once

#include <stddef.h>

#define LIST_PREPEND(head, item)                                        \
        do {                                                            \
                typeof(*(item)) **_lh = &(head), *_li = (item);         \
                _li->prev = NULL;                                       \
                _li->next = *_lh;                                       \
                if (*_lh)                                               \
                        (*_lh)->prev = _li;                             \
                *_lh = _li;                                             \
        } while (0)

/* Walks to the end: for short lists, or where order matters more than the walk. */
#define LIST_APPEND(head, item)                                         \
        do {                                                            \
                typeof(*(item)) **_lh = &(head), *_li = (item), *_ll = *_lh; \
                _li->next = NULL;                                       \
                if (!_ll) {                                             \
                        _li->prev = NULL;                               \
                        *_lh = _li;                                     \
                        break;                                          \
                }                                                       \
                while (_ll->next)                                       \
                        _ll = _ll->next;                                \
                _ll->next = _li;                                        \
                _li->prev = _ll;                                        \
        } while (0)

#define LIST_REMOVE(head, item)                                         \
        do {                                                            \
                typeof(*(item)) **_lh = &(head), *_li = (item);         \
                if (_li->prev)                                          \
                        _li->prev->next = _li->next;                    \
                else                                                    \
                        *_lh = _li->next;                               \
                if (_li->next)                                          \
                        _li->next->prev = _li->prev;                    \
                _li->prev = _li->next = NULL;                           \
        } while (0)
