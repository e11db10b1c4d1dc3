/*
** $Id: lstring.c,v 2.8.1.1 2007/12/27 13:02:25 roberto Exp $
** String table (keeps all strings handled by Lua)
** See Copyright Notice in lua.h
*/


#include <string.h>

#define lstring_c
#define LUA_CORE

#include "lua.h"

#include "ldebug.h"
#include "lmem.h"
#include "lobject.h"
#include "lstate.h"
#include "lstring.h"



void luaS_resize (lua_State *L, int newsize) {
  GCObject **newhash;
  stringtable *tb;
  int i;
  if (G(L)->gcstate == GCSsweepstring)
    return;  /* cannot resize during GC traverse */
  newhash = luaM_newvector(L, newsize, GCObject *);
  tb = &G(L)->strt;
  for (i=0; i<newsize; i++) newhash[i] = NULL;
  /* rehash */
  for (i=0; i<tb->size; i++) {
    GCObject *p = tb->hash[i];
    while (p) {  /* for each node in the list */
      GCObject *next = p->gch.next;  /* save next */
      unsigned int h = gco2ts(p)->hash;
      int h1 = lmod(h, newsize);  /* new position */
      lua_assert(cast_int(h%newsize) == lmod(h, newsize));
      p->gch.next = newhash[h1];  /* chain it */
      newhash[h1] = p;
      p = next;
    }
  }
  luaM_freearray(L, tb->hash, tb->size, TString *);
  tb->size = newsize;
  tb->hash = newhash;
}


static TString *newlstr (lua_State *L, const char *str, size_t l,
                                       unsigned int h) {
  TString *ts;
  stringtable *tb;
  if (l+1 > (MAX_SIZET - sizeof(TString))/sizeof(char))
    luaM_toobig(L);
  ts = cast(TString *, luaM_malloc(L, (l+1)*sizeof(char)+sizeof(TString)));
  ts->tsv.len = l;
  ts->tsv.hash = h;
  ts->tsv.marked = luaC_white(G(L));
  ts->tsv.tt = LUA_TSTRING;
  ts->tsv.reserved = 0;
  if (!luaS_copy(L, cast(char *, ts+1), str, l)) {
    /* stopped: the string is not linked anywhere yet */
    luaM_freemem(L, ts, (l+1)*sizeof(char)+sizeof(TString));
    luaG_errormsg(L);
  }
  ((char *)(ts+1))[l] = '\0';  /* ending 0 */
  tb = &G(L)->strt;
  h = lmod(h, tb->size);
  ts->tsv.next = tb->hash[h];  /* chain new entry */
  tb->hash[h] = obj2gco(ts);
  tb->nuse++;
  if (tb->nuse > cast(lu_int32, tb->size) && tb->size <= MAX_INT/2)
    luaS_resize(L, tb->size*2);  /* too crowded */
  return ts;
}


/*
** evalbench: the string hash is chosen per state, as the servers patch this
** function: stock Lua samples long strings, Redis hashes every byte with the
** same mix, Valkey uses MurmurHash3 (x86, 32 bits) seeded with the length.
** The mode is read once in lua_newstate, before any string is interned.
*/
#if defined(_MSC_VER)
#define l_threadlocal __declspec(thread)
#else
#define l_threadlocal __thread
#endif

static l_threadlocal int next_strhash = LUA_STRHASH_STOCK;

LUA_API int lua_setnextstrhash (int mode) {
  int previous = next_strhash;
  if (mode == LUA_STRHASH_STOCK || mode == LUA_STRHASH_EVERY_BYTE ||
      mode == LUA_STRHASH_MURMUR32)
    next_strhash = mode;
  return previous;
}

lu_byte luaS_nextstrhash (void) {
  return cast_byte(next_strhash);
}

LUA_API int lua_strhash (lua_State *L) {
  return G(L)->strhash;
}


/*
** evalbench: the stop check (lua_setstopcheck). Copying or comparing 64 MiB
** takes milliseconds in one memcpy/memcmp; in chunks, a stop that comes due
** meanwhile is seen within one chunk.
*/
LUA_API void lua_setstopcheck (lua_State *L, lua_StopCheck f) {
  G(L)->stopcheck = f;
}

LUA_API int lua_stopcheck (lua_State *L) {
  return G(L)->stopcheck != NULL && G(L)->stopcheck(L, 1);
}

LUA_API int lua_stoppending (lua_State *L) {
  return G(L)->stopcheck != NULL && G(L)->stopcheck(L, 0);
}

/* luaS_copy of more than one chunk */
int luaS_copylong (lua_State *L, char *dst, const char *src, size_t l) {
  while (l > LUA_STOPCHECK_CHUNK) {
    memcpy(dst, src, LUA_STOPCHECK_CHUNK);
    dst += LUA_STOPCHECK_CHUNK; src += LUA_STOPCHECK_CHUNK; l -= LUA_STOPCHECK_CHUNK;
    if (lua_stopcheck(L)) return 0;
  }
  memcpy(dst, src, l);
  return 1;
}

/* memcmp(a, b, l) == 0, raising the stop between chunks */
static int equal_bytes (lua_State *L, const char *a, const char *b, size_t l) {
  while (l > LUA_STOPCHECK_CHUNK) {
    if (memcmp(a, b, LUA_STOPCHECK_CHUNK) != 0) return 0;
    a += LUA_STOPCHECK_CHUNK; b += LUA_STOPCHECK_CHUNK; l -= LUA_STOPCHECK_CHUNK;
    if (lua_stopcheck(L)) luaG_errormsg(L);
  }
  return memcmp(a, b, l) == 0;
}


static unsigned int mix_hash (const char *str, size_t l, size_t step) {
  unsigned int h = cast(unsigned int, l);  /* seed */
  size_t l1;
  for (l1=l; l1>=step; l1-=step)
    h = h ^ ((h<<5)+(h>>2)+cast(unsigned char, str[l1-1]));
  return h;
}


static lu_int32 rotl32 (lu_int32 x, int r) {
  return (x << r) | (x >> (32 - r));
}

/* one 32-bit block, read in the host's byte order as the server does */
static lu_int32 murmur_scramble (lu_int32 k) {
  k *= 0xcc9e2d51u;
  k = rotl32(k, 15);
  return k * 0x1b873593u;
}

static unsigned int murmur32_hash (const char *str, size_t l) {
  const unsigned char *p = cast(const unsigned char *, str);
  lu_int32 h = cast(lu_int32, l);  /* seed: the length (32 bits) */
  lu_int32 tail = 0;
  size_t blocks = l / 4;
  size_t i;
  for (i = 0; i < blocks; i++) {
    lu_int32 k;
    memcpy(&k, p + i*4, 4);
    h ^= murmur_scramble(k);
    h = rotl32(h, 13) * 5u + 0xe6546b64u;
  }
  p += blocks*4;
  switch (l & 3) {
    case 3: tail ^= cast(lu_int32, p[2]) << 16;  /* FALLTHROUGH */
    case 2: tail ^= cast(lu_int32, p[1]) << 8;  /* FALLTHROUGH */
    case 1: tail ^= p[0];
            h ^= murmur_scramble(tail);
  }
  h ^= cast(lu_int32, l);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return cast(unsigned int, h);
}


/*
** evalbench: a string longer than this is sampled in every mode. Hashing every
** byte of a 64 MiB result takes tens of milliseconds in one C call that no stop
** check can split; only the order of tables keyed by such strings differs.
*/
#define STRHASH_FULL_MAX ((size_t)64 * 1024)

TString *luaS_newlstr (lua_State *L, const char *str, size_t l) {
  GCObject *o;
  unsigned int h;
  switch (l > STRHASH_FULL_MAX ? LUA_STRHASH_STOCK : G(L)->strhash) {
    case LUA_STRHASH_EVERY_BYTE: h = mix_hash(str, l, 1); break;
    case LUA_STRHASH_MURMUR32: h = murmur32_hash(str, l); break;
    default: h = mix_hash(str, l, (l>>5)+1); break;  /* sample long strings */
  }
  for (o = G(L)->strt.hash[lmod(h, G(L)->strt.size)];
       o != NULL;
       o = o->gch.next) {
    TString *ts = rawgco2ts(o);
    if (ts->tsv.len == l && equal_bytes(L, str, getstr(ts), l)) {
      /* string may be dead */
      if (isdead(G(L), o)) changewhite(o);
      return ts;
    }
  }
  return newlstr(L, str, l, h);  /* not found */
}


Udata *luaS_newudata (lua_State *L, size_t s, Table *e) {
  Udata *u;
  if (s > MAX_SIZET - sizeof(Udata))
    luaM_toobig(L);
  u = cast(Udata *, luaM_malloc(L, s + sizeof(Udata)));
  u->uv.marked = luaC_white(G(L));  /* is not finalized */
  u->uv.tt = LUA_TUSERDATA;
  u->uv.len = s;
  u->uv.metatable = NULL;
  u->uv.env = e;
  /* chain it on udata list (after main thread) */
  u->uv.next = G(L)->mainthread->next;
  G(L)->mainthread->next = obj2gco(u);
  return u;
}

