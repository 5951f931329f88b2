"""The priority queue of the robust search: a binary heap of node ids ordered by
``(cost, -depth, -id)``, and the array growth it shares with the search's node arrays."""

import numpy as np
from numba import njit


@njit(cache=True)
def grow(a):
    """``a`` copied into an array twice as long (the tail uninitialised)."""
    b = np.empty(2 * a.shape[0], dtype=a.dtype)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@njit(cache=True)
def heap_before(a, b, cost, depth):
    """Heap order: lower cost first, then deeper, then newer."""
    if cost[a] != cost[b]:
        return cost[a] < cost[b]
    if depth[a] != depth[b]:
        return depth[a] > depth[b]
    return a > b


@njit(cache=True)
def heap_push(heap, size, x, cost, depth):
    """Push node ``x`` on the binary heap ``heap[:size]``; returns the (maybe grown) heap."""
    if size == heap.shape[0]:
        heap = grow(heap)
    i = size
    heap[i] = x
    while i > 0:
        p = (i - 1) // 2
        if not heap_before(heap[i], heap[p], cost, depth):
            break
        heap[i], heap[p] = heap[p], heap[i]
        i = p
    return heap


@njit(cache=True)
def heap_pop(heap, size, cost, depth):
    """Pop the first node of ``heap[:size]`` (the caller decrements ``size``)."""
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        a, b, m = 2 * i + 1, 2 * i + 2, i
        if a < size and heap_before(heap[a], heap[m], cost, depth):
            m = a
        if b < size and heap_before(heap[b], heap[m], cost, depth):
            m = b
        if m == i:
            return top
        heap[i], heap[m] = heap[m], heap[i]
        i = m
