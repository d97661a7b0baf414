# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""fastText's ``predict`` for a quantized supervised model (lid.176.ftz), compiled.

Why: the ``text`` step asks fastText about every text that reaches its lang rule, and about
two thirds of fastText's instructions are not the model but its text handling: the wheel's
``Dictionary::computeSubwords`` builds a ``std::string`` for every character n-gram
(old C++ string ABI: a heap allocation per growth), then hashes it from the start.  This
module computes the same n-gram hashes incrementally over the UTF-8 bytes, with no
allocation, and does the rest of the prediction as fastText 0.9.2 does it, operation for
operation in the same float / double precision:

* tokens: ``Dictionary::readWord`` (split on `` \\n\\r\\t\\v\\f\\0``; a newline is the
  ``</s>`` token, which ends the line), ids by the dictionary's own open-addressing table;
* subwords: ``computeSubwords`` on ``"<" + token + ">"`` (n-grams of ``minn``..``maxn``
  UTF-8 characters, FNV-1a with fastText's signed-char quirk, ``% bucket``), then the
  pruned-index map (``pushHash``); words in the vocabulary use their precomputed lists;
* hidden vector: the rows of the product-quantized input matrix (norm-quantized too) added
  in input order, then scaled by ``1 / n`` (``Model::computeHidden``);
* labels: ``HierarchicalSoftmaxLoss::dfs`` over the Huffman tree built from the label
  counts, k = 1, threshold 0, ties going to the later leaf as in fastText's heap;
  probability ``expf(score)``.

Only what lid.176.ftz uses is supported (format version 12, supervised, hierarchical
softmax, quantized input, dense output, word n-grams of 1); :func:`load` answers ``None``
for any other model, and the caller (``filters.language.LanguageId``) then asks fastText.
``tests/filters/test_fastlid.py`` holds the labels and probabilities to fastText's own, bit
for bit.  Without a compiler this module is simply absent (``make setup`` / ``setup.py``
build it) and fastText answers as before.
"""
import math
import struct

import numpy as np

from libc.math cimport expf, isnan, log
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL

_MAGIC, _VERSION = 793712314, 12
_SUP, _HS = 3, 1  # fastText's model_name::sup and loss_name::hs
_EOS = b"</s>"
cdef enum:
    KSUB = 256  # centroids per sub-quantizer (8-bit codes)

cdef uint32_t FNV_OFFSET = 2166136261u
cdef uint32_t FNV_PRIME = 16777619u


cdef inline float _std_log(float x) noexcept:
    # fastText's std_log(real x): the argument is a float, the log a double, the result a float.
    return <float>log(<double>x + 1e-5)


class Unsupported(ValueError):
    """The model file uses something this predictor does not implement."""


cdef class Model:
    cdef readonly int dim, minn, maxn, bucket, nwords, nlabels, size
    cdef int64_t prune_size
    cdef int nsubq, dsub, lastdsub, nlastdsub, rows, word_slots, prune_bits
    cdef bint qnorm
    cdef float log_threshold
    cdef readonly list labels
    cdef const uint8_t[::1] codes
    cdef const float[::1] centroids
    cdef const uint8_t[::1] norm_codes
    cdef const float[::1] norm_centroids
    cdef const float[::1] wo
    cdef const int32_t[::1] left, right
    cdef const int32_t[::1] word_table
    cdef const uint8_t[::1] word_bytes
    cdef const int64_t[::1] word_start
    cdef const int8_t[::1] word_type
    cdef const int32_t[::1] sub_start, sub_ids
    cdef const int32_t[::1] prune_keys, prune_vals
    # raw pointers into the arrays above, for the hot loops (the arrays own the memory)
    cdef const uint8_t* p_codes
    cdef const float* p_centroids
    cdef const float* p_wo
    cdef const int32_t* p_sub_ids
    cdef const int32_t* p_prune_keys
    cdef const int32_t* p_prune_vals
    cdef float* p_norms  # each input row's norm (1 without norm quantization)
    # scratch, per call (calls hold the GIL: one at a time)
    cdef float* hidden
    cdef int32_t* ids
    cdef Py_ssize_t ids_cap
    cdef uint8_t* word
    cdef Py_ssize_t word_cap
    cdef float best
    cdef int32_t best_node
    cdef bint have, nan
    cdef Py_ssize_t nrows

    def __cinit__(self):
        self.hidden = NULL
        self.p_norms = NULL
        self.ids = NULL
        self.word = NULL
        self.ids_cap = self.word_cap = 0

    def __dealloc__(self):
        free(self.hidden)
        free(self.ids)
        free(self.word)
        free(self.p_norms)

    def __init__(self, bytes data):
        cdef Py_ssize_t r
        o = 0  # a Python int: the nested readers below share it

        def take(fmt):
            nonlocal o
            values = struct.unpack_from("<" + fmt, data, o)
            o += struct.calcsize("<" + fmt)
            return values

        def array(dtype, count):
            nonlocal o
            a = np.frombuffer(data, dtype=dtype, count=count, offset=o)
            o += a.nbytes
            return a

        magic, version = take("ii")
        if magic != _MAGIC or version != _VERSION:
            raise Unsupported(f"not a fastText model of format {_VERSION}")
        (dim, _ws, _epoch, _min_count, _neg, word_ngrams, loss, model, bucket, minn, maxn,
         _lr_update_rate) = take("12i")
        take("d")  # t
        if model != _SUP or loss != _HS or word_ngrams > 1 or maxn <= 0 or dim <= 0:
            raise Unsupported("only supervised hierarchical-softmax models with subwords "
                              "and word n-grams of 1")
        self.dim, self.minn, self.maxn, self.bucket = dim, minn, maxn, bucket
        size, nwords, nlabels = take("3i")
        _ntokens, prune_size = take("2q")
        self.size, self.nwords, self.nlabels, self.prune_size = size, nwords, nlabels, prune_size
        words, counts, types = [], [], []
        for _ in range(size):
            end = data.index(b"\0", o)
            words.append(data[o:end])
            o = end + 1
            count, kind = take("qb")
            counts.append(count)
            types.append(kind)
        prune = array("<i4", 2 * max(prune_size, 0)).reshape(-1, 2)
        (quant_input,) = take("?")
        if not quant_input:
            raise Unsupported("the input matrix is not quantized")
        qnorm, m, n, codesize = take("?qqi")
        if n != dim:
            raise Unsupported("input matrix width differs from dim")
        self.qnorm, self.rows = qnorm, m
        self.codes = array(np.uint8, codesize)
        pq_dim, self.nsubq, self.dsub, self.lastdsub = take("4i")
        if pq_dim != dim or self.nsubq * self.dsub - (self.dsub - self.lastdsub) != dim \
                or codesize != m * self.nsubq:
            raise Unsupported("unexpected product quantizer")
        self.centroids = array("<f4", dim * KSUB)
        if qnorm:
            self.norm_codes = array(np.uint8, m)
            n_dim, n_nsubq, _n_dsub, self.nlastdsub = take("4i")
            if n_dim != 1 or n_nsubq != 1:
                raise Unsupported("unexpected norm quantizer")
            self.norm_centroids = array("<f4", KSUB)
        (qout,) = take("?")
        if qout:
            raise Unsupported("the output matrix is quantized")
        mo, no = take("2q")
        if no != dim or mo < nlabels or nlabels < 1:
            raise Unsupported("output matrix does not fit the labels")
        self.wo = array("<f4", mo * no)
        if o != len(data):
            raise Unsupported("trailing bytes")

        # the dictionary: words as one byte string, the open-addressing table of
        # Dictionary::find (size ceil(size / 0.7), linear probing; a later duplicate wins)
        starts = np.zeros(size + 1, dtype=np.int64)
        starts[1:] = np.cumsum([len(w) for w in words])
        self.word_bytes = np.frombuffer(b"".join(words) or b"\0", dtype=np.uint8)
        self.word_start = starts
        self.word_type = np.array(types, dtype=np.int8)
        self.word_slots = max(1, math.ceil(size / 0.7))
        table = np.full(self.word_slots, -1, dtype=np.int32)
        self.word_table = table
        for i, w in enumerate(words):
            table[self._find(w, len(w))] = i
        # pushHash's map from a hashed n-gram to its row (open addressing, power-of-two size)
        bits = max(1, int(len(prune) * 2).bit_length())
        keys = np.full(1 << bits, -1, dtype=np.int32)
        vals = np.full(1 << bits, -1, dtype=np.int32)
        mask = (1 << bits) - 1
        for key, val in prune.tolist():
            if key < 0 or val < 0 or nwords + val >= m:
                raise Unsupported("pruned index out of range")
            slot = ((key * 2654435761) & 0xFFFFFFFF) >> (32 - bits)
            while keys[slot] != -1 and keys[slot] != key:
                slot = (slot + 1) & mask
            keys[slot], vals[slot] = key, val
        self.prune_bits = bits
        self.prune_keys, self.prune_vals = keys, vals
        self.p_prune_keys, self.p_prune_vals = &self.prune_keys[0], &self.prune_vals[0]
        self.p_codes, self.p_centroids, self.p_wo = &self.codes[0], &self.centroids[0], &self.wo[0]
        # QuantMatrix::addRowToVector's norm of each row, looked up once here
        self.p_norms = <float*>malloc(max(m, 1) * sizeof(float))
        if self.p_norms == NULL:
            raise MemoryError()
        for r in range(m):
            self.p_norms[r] = self.norm_centroids[self.norm_codes[r] * self.nlastdsub] \
                if qnorm else 1.0
        if prune_size < 0 and nwords + bucket > m:
            raise Unsupported("input matrix smaller than words + buckets")
        if nwords > m:
            raise Unsupported("more words than input rows")

        self._alloc(dim, 64, 64)
        # Dictionary::initNgrams: each entry's own id, then its subwords (none for </s>)
        sub_start, sub_ids = [0], []
        for i, w in enumerate(words):
            sub_ids.append(i)
            if w != _EOS:
                sub_ids.extend(self._subwords_of(w))
            sub_start.append(len(sub_ids))
        self.sub_start = np.array(sub_start, dtype=np.int32)
        self.sub_ids = np.array(sub_ids or [0], dtype=np.int32)
        self.p_sub_ids = &self.sub_ids[0]

        # HierarchicalSoftmaxLoss::buildTree over the label counts (dictionary order)
        osz = nlabels
        count = [counts[nwords + i] for i in range(osz)] + [10 ** 15] * (osz - 1)
        left, right = [-1] * (2 * osz - 1), [-1] * (2 * osz - 1)
        leaf, node = osz - 1, osz
        for i in range(osz, 2 * osz - 1):
            mini = [0, 0]
            for j in range(2):
                if leaf >= 0 and count[leaf] < count[node]:
                    mini[j], leaf = leaf, leaf - 1
                else:
                    mini[j], node = node, node + 1
            left[i], right[i] = mini
            count[i] = count[mini[0]] + count[mini[1]]
        self.left = np.array(left, dtype=np.int32)
        self.right = np.array(right, dtype=np.int32)
        self.labels = [words[nwords + i].decode("utf-8") for i in range(osz)]
        self.log_threshold = _std_log(0.0)

    cdef int _alloc(self, int dim, Py_ssize_t n_ids, Py_ssize_t n_word) except -1:
        cdef void* p
        if self.hidden == NULL:
            self.hidden = <float*>malloc(dim * sizeof(float))
            if self.hidden == NULL:
                raise MemoryError()
        if n_ids > self.ids_cap:
            p = realloc(self.ids, n_ids * sizeof(int32_t))
            if p == NULL:
                raise MemoryError()
            self.ids, self.ids_cap = <int32_t*>p, n_ids
        if n_word > self.word_cap:
            p = realloc(self.word, n_word)
            if p == NULL:
                raise MemoryError()
            self.word, self.word_cap = <uint8_t*>p, n_word
        return 0

    def _subwords_of(self, bytes token):
        """The subword rows of ``token`` (``computeSubwords("<" + token + ">")``)."""
        cdef Py_ssize_t n = len(token), k
        self._alloc(self.dim, (n + 2) * self.maxn, n + 2)
        k = self._subwords(token, n)
        return [self.ids[i] for i in range(k)]

    cdef int32_t _find(self, const uint8_t* w, Py_ssize_t n) noexcept:
        """Dictionary::find: the table slot of token ``w``."""
        cdef uint32_t h = FNV_OFFSET
        cdef Py_ssize_t i
        cdef int32_t slot, wid
        for i in range(n):
            h = (h ^ <uint32_t><int8_t>w[i]) * FNV_PRIME
        slot = <int32_t>(h % <uint32_t>self.word_slots)
        while True:
            wid = self.word_table[slot]
            if wid == -1 or (self.word_start[wid + 1] - self.word_start[wid] == n and
                             memcmp(&self.word_bytes[self.word_start[wid]], w, n) == 0):
                return slot
            slot = (slot + 1) % self.word_slots

    cdef inline int32_t _push(self, int32_t h) noexcept:
        """Dictionary::pushHash: the input row of hashed n-gram ``h``, or -1 for none."""
        cdef uint32_t slot
        cdef int32_t key
        if self.prune_size == 0 or h < 0:
            return -1
        if self.prune_size > 0:
            slot = (<uint32_t>h * 2654435761u) >> (32 - self.prune_bits)
            while True:
                key = self.p_prune_keys[slot]
                if key == h:
                    return self.nwords + self.p_prune_vals[slot]
                if key == -1:
                    return -1
                slot = (slot + 1) & ((1u << self.prune_bits) - 1)
        return self.nwords + h

    cdef Py_ssize_t _subwords(self, const uint8_t* token, Py_ssize_t n) noexcept:
        """computeSubwords on "<" + token + ">" into self.ids (room for (n + 2) * maxn
        ids, and n + 2 bytes in self.word, made by the caller); the count."""
        cdef uint8_t* w = self.word
        cdef Py_ssize_t size = n + 2, i, j, k = 0
        cdef int ng
        cdef uint32_t h
        cdef int32_t row
        w[0] = 60  # "<"
        for i in range(n):
            w[i + 1] = token[i]
        w[n + 1] = 62  # ">"
        for i in range(size):
            if (w[i] & 0xC0) == 0x80:  # inside a UTF-8 character
                continue
            # The hash of the n-gram grows with it: FNV-1a is a left fold over its bytes.
            h = FNV_OFFSET
            j = i
            ng = 1
            while j < size and ng <= self.maxn:
                h = (h ^ <uint32_t><int8_t>w[j]) * FNV_PRIME
                j += 1
                while j < size and (w[j] & 0xC0) == 0x80:
                    h = (h ^ <uint32_t><int8_t>w[j]) * FNV_PRIME
                    j += 1
                if ng >= self.minn and not (ng == 1 and (i == 0 or j == size)):
                    row = self._push(<int32_t>(h % <uint32_t>self.bucket))
                    if row >= 0:
                        self.ids[k] = row
                        k += 1
                ng += 1
        return k

    cdef inline void _add_row(self, int32_t row) noexcept:
        """QuantMatrix::addRowToVector: hidden += norm * the decoded row (ProductQuantizer::
        addcode: sub-quantizer m adds its centroid to elements m * dsub ...)."""
        cdef float alpha = self.p_norms[row]
        cdef const float* c
        cdef float* x = self.hidden
        cdef int m, j, dsub = self.dsub, last = self.nsubq - 1
        cdef const uint8_t* code = self.p_codes + self.nsubq * row
        for m in range(last):
            c = self.p_centroids + (m * KSUB + code[m]) * dsub
            for j in range(dsub):
                x[j] = x[j] + alpha * c[j]
            x += dsub
        c = self.p_centroids + last * KSUB * dsub + code[last] * self.lastdsub
        for j in range(self.lastdsub):
            x[j] = x[j] + alpha * c[j]

    cdef int _token(self, const uint8_t* tok, Py_ssize_t n) except -1:
        """Dictionary::getLine for one token: adds its rows; 1 when it is </s> (the end)."""
        cdef int32_t wid = self.word_table[self._find(tok, n)]
        cdef Py_ssize_t k, i
        cdef bint eos = n == 4 and memcmp(tok, b"</s>", 4) == 0
        if wid >= 0:
            if self.word_type[wid] == 0:
                for i in range(self.sub_start[wid], self.sub_start[wid + 1]):
                    self._add_row(self.p_sub_ids[i])
                self.nrows += self.sub_start[wid + 1] - self.sub_start[wid]
        # Out of the vocabulary: a word's subwords, unless it names a label ("__label__",
        # Args::label's default: not stored in the model file) or is </s>.
        elif not (n >= 9 and memcmp(tok, b"__label__", 9) == 0) and not eos:
            self._alloc(self.dim, (n + 2) * self.maxn, n + 2)
            k = self._subwords(tok, n)
            for i in range(k):
                self._add_row(self.ids[i])
            self.nrows += k
        return eos

    cdef void _dfs(self, int32_t node, float score) noexcept:
        """HierarchicalSoftmaxLoss::dfs with k = 1."""
        cdef float f, d
        cdef int j
        cdef const float* row
        if score < self.log_threshold:
            return
        if self.have and score < self.best:
            return
        if self.left[node] == -1 and self.right[node] == -1:
            # the heap of one: a leaf not pruned above scores at least the one held
            self.best, self.best_node, self.have = score, node, True
            return
        row = self.p_wo + (node - self.nlabels) * self.dim
        d = 0.0
        for j in range(self.dim):
            d = d + row[j] * self.hidden[j]
        if isnan(d):
            self.nan = True
            return
        f = <float>(1.0 / <double>(<float>1.0 + expf(-d)))
        self._dfs(self.left[node], score + _std_log(<float>(1.0 - <double>f)))
        self._dfs(self.right[node], score + _std_log(f))

    def predict(self, list lines):
        """``[(label, probability)]``, one per line, as fastText's ``multilinePredict(lines,
        1, 0.0)`` gives them (a line is read up to its first newline).  Raises
        ``Unsupported`` for a line fastText would answer with no label or an error."""
        cdef Py_ssize_t n, i, start
        cdef const uint8_t* s
        cdef int j
        cdef float inv
        out = []
        for line in lines:
            s = <const uint8_t*>PyUnicode_AsUTF8AndSize(line, &n)
            if n == 0:
                raise Unsupported("an empty line has no prediction")
            for j in range(self.dim):
                self.hidden[j] = 0.0
            self.nrows = 0
            # Dictionary::readWord: runs of non-separators; a newline is the token </s>
            i = 0
            while i < n:
                if s[i] == 10:  # "\n"
                    self._token(<const uint8_t*><const char*>b"</s>", 4)
                    break
                if s[i] == 32 or s[i] == 13 or s[i] == 9 or s[i] == 11 or s[i] == 12 \
                        or s[i] == 0:
                    i += 1
                    continue
                start = i
                while i < n and not (s[i] == 32 or s[i] == 10 or s[i] == 13 or s[i] == 9
                                     or s[i] == 11 or s[i] == 12 or s[i] == 0):
                    i += 1
                if self._token(&s[start], i - start):
                    break
            if self.nrows == 0:
                raise Unsupported("a line without input has no prediction")
            inv = <float>(1.0 / <double>self.nrows)
            for j in range(self.dim):
                self.hidden[j] = self.hidden[j] * inv
            self.have = self.nan = False
            self._dfs(2 * self.nlabels - 2, 0.0)
            if self.nan or not self.have:
                raise Unsupported("fastText raises on NaN scores or gives no label")
            out.append((self.labels[self.best_node], <double>expf(self.best)))
        return out


def load(path: str):
    """The :class:`Model` of the fastText file at ``path``, or ``None`` when it uses what this
    predictor does not implement (the caller then asks fastText)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return Model(data)
    except (Unsupported, struct.error, ValueError, IndexError):
        return None
