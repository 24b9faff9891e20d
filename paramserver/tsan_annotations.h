#pragma once
// ThreadSanitizer cannot see the order gRPC guarantees between the calls of one reactor (a
// callback runs after the operation that asked for it was started, on whatever thread): that
// synchronisation lives in the system's uninstrumented gRPC library. The reactors state it
// themselves: whoever starts an operation releases the reactor, every callback acquires it.
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#define DTB_TSAN_ACQUIRE(address) __tsan_acquire(static_cast<void*>(address))
#define DTB_TSAN_RELEASE(address) __tsan_release(static_cast<void*>(address))
#else
#define DTB_TSAN_ACQUIRE(address) ((void)0)
#define DTB_TSAN_RELEASE(address) ((void)0)
#endif
