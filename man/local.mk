# man/local.mk - included by the top Makefile.am.
# Section-3 pages, one per topic, each with a one-line ".so" alias per
# function it covers, so that `man zkl_mutex_lock` finds its page once
# installed.  tests/check-man.sh checks them against the headers.
dist_man3_MANS = man/zkl.3 man/zkl_version.3 \
	man/zkl_errors.3 man/zkl_strerror.3 man/zkl_err_name.3 \
	man/zkl_last_error.3 \
	man/zkl_session.3 man/zkl_session_opts_init.3 man/zkl_session_open.3 \
	man/zkl_session_close.3 man/zkl_session_state.3 \
	man/zkl_session_timeout.3 man/zkl_session_id.3 \
	man/zkl_session_zhandle.3 man/zkl_session_stats.3 \
	man/zkl_session_stats_export.3 \
	man/zkl_log.3 man/zkl_log_set.3 man/zkl_log_syslog.3 \
	man/zkl_log_stream.3 man/zkl_log_level_name.3 \
	man/zkl_mutex.3 man/zkl_mutex_opts_init.3 man/zkl_mutex_create.3 \
	man/zkl_mutex_lock.3 man/zkl_mutex_trylock.3 man/zkl_mutex_timedlock.3 \
	man/zkl_mutex_unlock.3 man/zkl_mutex_cancel.3 man/zkl_mutex_token.3 \
	man/zkl_mutex_holding.3 man/zkl_mutex_node.3 man/zkl_mutex_destroy.3 \
	man/zkl_rwlock.3 man/zkl_rwlock_opts_init.3 man/zkl_rwlock_create.3 \
	man/zkl_rwlock_rdlock.3 man/zkl_rwlock_tryrdlock.3 \
	man/zkl_rwlock_timedrdlock.3 man/zkl_rwlock_wrlock.3 \
	man/zkl_rwlock_trywrlock.3 man/zkl_rwlock_timedwrlock.3 \
	man/zkl_rwlock_unlock.3 man/zkl_rwlock_cancel.3 man/zkl_rwlock_token.3 \
	man/zkl_rwlock_holding.3 man/zkl_rwlock_node.3 man/zkl_rwlock_destroy.3 \
	man/zkl_election.3 man/zkl_election_opts_init.3 \
	man/zkl_election_create.3 man/zkl_election_start.3 \
	man/zkl_election_await.3 man/zkl_election_is_leader.3 \
	man/zkl_election_node.3 man/zkl_election_token.3 man/zkl_election_leader.3 \
	man/zkl_election_resign.3 man/zkl_election_destroy.3 \
	man/zkl_contenders.3 man/zkl_contenders_free.3 \
	man/zkl_contenders_order.3 man/zkl_kind_name.3 man/zkl_path_check.3 \
	man/zkl_async.3 man/zkl_session_fd.3 man/zkl_session_dispatch.3 \
	man/zkl_mutex_lock_async.3 man/zkl_mutex_unlock_async.3 \
	man/zkl_rwlock_rdlock_async.3 man/zkl_rwlock_wrlock_async.3 \
	man/zkl_rwlock_unlock_async.3 man/zkl_mutex_watch_async.3 \
	man/zkl_rwlock_watch_async.3 \
	man/zkl_adapters.3 man/zkl_uv_attach.3 man/zkl_uv_detach.3 \
	man/zkl_event_attach.3 man/zkl_event_detach.3 \
	man/zkl_ev_attach.3 man/zkl_ev_detach.3 \
	man/zkl_queue_claim.3 man/zkl_queue_ack.3 man/zkl_queue_nack.3 \
	man/zkl_queue_claim_health.3 man/zkl_queue_claim_async.3 \
	man/zkl_queue_ack_async.3 man/zkl_queue_nack_async.3 \
	man/zkl_queue.3 man/zkl_queue_opts_init.3 man/zkl_queue_create.3 \
	man/zkl_queue_put.3 man/zkl_queue_put_batch.3 man/zkl_queue_take.3 \
	man/zkl_queue_take_batch.3 man/zkl_queue_peek.3 man/zkl_queue_list.3 man/zkl_queue_size.3 \
	man/zkl_queue_remove.3 man/zkl_queue_cancel.3 \
	man/zkl_queue_put_async.3 man/zkl_queue_put_batch_async.3 \
	man/zkl_queue_take_async.3 man/zkl_item_free.3 man/zkl_items_free.3 \
	man/zkl_queue_destroy.3 \
	man/zkl_counter.3 man/zkl_counter_opts_init.3 man/zkl_counter_create.3 \
	man/zkl_counter_get.3 man/zkl_counter_set.3 man/zkl_counter_cas.3 \
	man/zkl_counter_add.3 man/zkl_counter_wait.3 man/zkl_counter_cancel.3 \
	man/zkl_counter_get_async.3 man/zkl_counter_set_async.3 \
	man/zkl_counter_cas_async.3 man/zkl_counter_add_async.3 \
	man/zkl_counter_wait_async.3 man/zkl_counter_destroy.3 \
	man/zkl_barrier.3 man/zkl_barrier_create.3 man/zkl_barrier_set.3 \
	man/zkl_barrier_remove.3 man/zkl_barrier_wait.3 \
	man/zkl_barrier_cancel.3 man/zkl_barrier_set_async.3 \
	man/zkl_barrier_remove_async.3 man/zkl_barrier_wait_async.3 \
	man/zkl_barrier_destroy.3 man/zkl_dbarrier_opts_init.3 \
	man/zkl_dbarrier_create.3 \
	man/zkl_dbarrier_enter.3 man/zkl_dbarrier_leave.3 \
	man/zkl_dbarrier_count.3 man/zkl_dbarrier_cancel.3 \
	man/zkl_dbarrier_enter_async.3 man/zkl_dbarrier_leave_async.3 \
	man/zkl_dbarrier_destroy.3 \
	man/zkl_sem.3 man/zkl_sem_opts_init.3 man/zkl_sem_create.3 \
	man/zkl_sem_acquire.3 \
	man/zkl_sem_release.3 man/zkl_sem_release_all.3 \
	man/zkl_sem_lease_health.3 man/zkl_sem_held.3 man/zkl_sem_count.3 man/zkl_sem_holders.3 man/zkl_sem_holders_free.3 \
	man/zkl_sem_cancel.3 man/zkl_sem_acquire_async.3 \
	man/zkl_sem_release_async.3 man/zkl_sem_destroy.3 \
	man/zkl_multilock.3 man/zkl_multilock_opts_init.3 \
	man/zkl_multilock_create.3 man/zkl_multilock_lock.3 \
	man/zkl_multilock_trylock.3 man/zkl_multilock_timedlock.3 \
	man/zkl_multilock_unlock.3 man/zkl_multilock_lock_async.3 \
	man/zkl_multilock_unlock_async.3 man/zkl_multilock_cancel.3 \
	man/zkl_multilock_holding.3 man/zkl_multilock_count.3 \
	man/zkl_multilock_token.3 man/zkl_multilock_node.3 \
	man/zkl_multilock_destroy.3

# Checks of the man pages, of docker-compose.yml against the test harness,
# and of an installed tree (make install DESTDIR=... and a program built
# with pkg-config against it).
TESTS += tests/check-man.sh tests/check-compose.sh tests/check-install.sh
EXTRA_DIST += tests/check-man.sh tests/check-compose.sh \
	tests/check-install.sh tests/install-smoke.c \
	docker-compose.yml docker/Dockerfile docker/Dockerfile.dockerignore
