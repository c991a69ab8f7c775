//! The dispatch's tests: turns by virtual time, holds and give-backs, marks.

use super::*;
use crate::store::TaskRef;

fn job(tenant: &str, n: usize) -> ClaimedJob {
    ClaimedJob {
        id: format!("{tenant}-{n}"),
        tenant: tenant.into(),
        task: TaskRef {
            name: "t".into(),
            version: 1,
            digest: "sha256:0".into(),
        },
        input: "{}".into(),
        queue: "default".into(),
        attempt: 1,
        attempts: 1,
        max_attempts: 1,
        deadline_at: None,
        fallback_depth: 0,
        snoozes: 0,
        started_at: 0,
        lease_token: "t".into(),
        fuel: None,
        own_task: None,
        begun: true,
        due_at: 0,
        callback_depth: 0,
        fair_key: None,
        traceparent: None,
        weight: 1,
    }
}

#[tokio::test]
async fn tenants_take_turns() {
    let d = Dispatch::new(8);
    d.push((0..3).map(|n| job("a", n)).collect()).unwrap();
    d.push(vec![job("b", 0)]).unwrap();
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(d.next().await.unwrap().0.id);
    }
    assert_eq!(order, ["a-0", "b-0", "a-1", "a-2"]);
}

#[tokio::test]
async fn an_idle_tenant_starts_beyond_full_slots_and_a_busy_one_waits() {
    let d = Dispatch::new(1);
    d.push(vec![job("a", 0), job("a", 1)]).unwrap();
    let (first, seat) = d.next().await.unwrap();
    assert_eq!((first.id.as_str(), seat), ("a-0", Seat::Slot));
    d.push(vec![job("b", 0)]).unwrap();
    let (second, seat) = d.next().await.unwrap();
    assert_eq!((second.id.as_str(), seat), ("b-0", Seat::Extra));
    // a-1 waits for a slot: a is running, and so is b.
    d.push(vec![job("b", 1)]).unwrap();
    assert!(d.try_next().unwrap().is_none(), "nothing may start");
    let _ = d.finished("a", Seat::Slot, Some(Duration::ZERO));
    // a has had the slot's time and b none of it: b-1 takes the slot.
    let (third, seat) = d.next().await.unwrap();
    assert_eq!((third.id.as_str(), seat), ("b-1", Seat::Slot));
    assert!(d.has_waiting("a"), "a-1 waits");
    assert!(!d.has_running("a"));
    assert!(d.try_next().unwrap().is_none(), "no slot, no extra seat");
    assert_eq!(d.load(), 3, "b-0 and b-1 run, a-1 waits");
    let _ = d.finished("b", Seat::Slot, Some(Duration::ZERO));
    let (fourth, seat) = d.next().await.unwrap();
    assert_eq!((fourth.id.as_str(), seat), ("a-1", Seat::Slot));
    let _ = d.finished("a", Seat::Slot, Some(Duration::ZERO));
    assert_eq!(d.load(), 1, "an ended attempt is not here");
    assert!(!d.has_running("a"));
    d.push(vec![job("b", 2)]).unwrap();
    assert_eq!(d.close().len(), 1);
    assert!(d.next().await.is_none());
    assert_eq!(d.try_next(), Err(Closed));
    let refused = d.push(vec![job("c", 0)]).unwrap_err();
    assert_eq!(refused.len(), 1, "a closed dispatch gives jobs back");
}

#[tokio::test]
async fn a_free_lane_starts_idle_tenants_and_a_busy_one_leaves_them_to_the_workers() {
    let d = Dispatch::with_lane(1);
    d.push(vec![job("a", 0), job("a", 1)]).unwrap();
    // a has nothing running: a-0 is the free lane's, not a worker's.
    assert!(d.try_next().unwrap().is_none(), "left to the lane");
    let (first, seat) = d.next_prompt().await.unwrap();
    assert_eq!((first.id.as_str(), seat), ("a-0", Seat::Slot));
    // a runs now: a-1 is a worker's, and the lane takes no busy tenant.
    d.push(vec![job("b", 0)]).unwrap();
    assert!(
        d.try_pick(Picker::Lane).unwrap().is_none(),
        "the lane is busy"
    );
    let (second, seat) = d.next().await.unwrap();
    assert_eq!(
        (second.id.as_str(), seat),
        ("b-0", Seat::Extra),
        "a busy lane leaves b to the workers"
    );
    d.lane_free();
    assert!(
        d.try_pick(Picker::Lane).unwrap().is_none(),
        "a-1's tenant is running"
    );
    let _ = d.finished("a", Seat::Slot, Some(Duration::ZERO));
    let (third, seat) = d.next_prompt().await.unwrap();
    assert_eq!((third.id.as_str(), seat), ("a-1", Seat::Slot));
    assert_eq!(d.load(), 2);
    assert!(d.close().is_empty());
    assert!(d.next_prompt().await.is_none(), "closed");
}

#[tokio::test]
async fn a_job_not_begun_waits_for_its_mark() {
    let d = Dispatch::new(2);
    let unbegun = |t: &str, n| ClaimedJob {
        begun: false,
        ..job(t, n)
    };
    d.push(vec![unbegun("a", 0), unbegun("a", 1), unbegun("b", 0)])
        .unwrap();
    d.push(vec![job("c", 0)]).unwrap();
    let (first, _) = d.try_next().unwrap().unwrap();
    assert_eq!(first.id, "c-0", "only a begun job starts");
    assert!(d.try_next().unwrap().is_none(), "the rest wait for marks");
    // A window of two: the fronts of the lines, tenants in turn.
    let marking = d.to_mark(2);
    let ids: Vec<&str> = marking.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(ids, ["a-0", "b-0"]);
    assert!(d.to_mark(2).is_empty(), "two are being marked already");
    d.marked(&marking[..1], false);
    d.marked(&marking[1..], true);
    let (second, _) = d.next().await.unwrap();
    assert_eq!(second.id, "b-0");
    assert!(d.try_next().unwrap().is_none(), "a-0's mark failed");
    let again = d.to_mark(2);
    let ids: Vec<&str> = again.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(ids, ["a-0", "a-1"], "a failed mark is made again");
    d.marked(&again, true);
    let (third, seat) = d.next().await.unwrap();
    assert_eq!((third.id.as_str(), seat), ("a-0", Seat::Extra));
    assert_eq!(d.picks(), 3);
    assert_eq!(d.load(), 4, "three run, a-1 waits");
    // A job claimed begun goes before its tenant's unbegun ones.
    d.push(vec![unbegun("a", 2), job("a", 3)]).unwrap();
    let _ = d.finished("a", Seat::Extra, Some(Duration::ZERO));
    let (fourth, _) = d.next().await.unwrap();
    assert_eq!(fourth.id, "a-1", "marked before a-3 came");
    let _ = d.finished("a", Seat::Extra, Some(Duration::ZERO));
    let (fifth, _) = d.next().await.unwrap();
    assert_eq!(fifth.id, "a-3", "begun, before a-2");
}

#[tokio::test]
async fn a_job_claimed_again_replaces_its_stale_copy() {
    let d = Dispatch::new(2);
    let under = |n, token: &str, begun| ClaimedJob {
        lease_token: token.into(),
        begun,
        ..job("a", n)
    };
    // a-0 waits to be marked when its lease runs out (the runner was
    // stopped past it) and the runner claims it again, begun.
    d.push(vec![under(0, "old", false), under(1, "t", false)])
        .unwrap();
    let marking = d.to_mark(2);
    assert_eq!(marking.len(), 2);
    assert!(d.drop_stale("a", "a-0", "old"));
    assert!(!d.drop_stale("a", "a-0", "old"), "gone already");
    d.push(vec![under(0, "new", true)]).unwrap();
    // The mark of the old copy fails; the new copy is not touched.
    d.marked(&marking, false);
    let (first, _) = d.next().await.unwrap();
    assert_eq!(
        (first.id.as_str(), first.lease_token.as_str()),
        ("a-0", "new")
    );
    assert!(d.try_next().unwrap().is_none(), "a-1 waits for its mark");
    let again = d.to_mark(2);
    assert_eq!(
        again,
        [("a-1".to_owned(), "t".to_owned())],
        "the old copy is gone"
    );
    d.marked(&again, true);
    let (second, _) = d.next().await.unwrap();
    assert_eq!(second.id, "a-1");
    assert_eq!(d.load(), 2, "two run, nothing waits");
    assert!(d.to_mark(2).is_empty() && d.try_next().unwrap().is_none());
    // A begun copy dropped, its tenant's line empty, goes from the turns.
    d.push(vec![under(2, "old", true)]).unwrap();
    assert!(d.drop_stale("a", "a-2", "old"));
    assert!(!d.has_waiting("a"));
    let _ = d.finished("a", Seat::Slot, Some(Duration::ZERO));
    d.push(vec![job("b", 0)]).unwrap();
    assert_eq!(d.next().await.unwrap().0.id, "b-0");
}

#[tokio::test]
async fn the_slots_go_by_runner_time_not_by_turns() {
    let d = Dispatch::new(1);
    d.push((0..5).map(|n| job("heavy", n)).collect()).unwrap();
    d.push((0..200).map(|n| job("light", n)).collect()).unwrap();
    let (first, seat) = d.next().await.unwrap();
    assert_eq!(first.id, "heavy-0", "first in turn");
    let _ = d.finished("heavy", seat, Some(Duration::from_millis(100)));
    // The light tenant's 1 ms attempts start until it has had about
    // as much of the slot as the heavy one's 100 ms.
    let mut light = 0;
    loop {
        let (j, seat) = d.next().await.unwrap();
        if j.tenant == "heavy" {
            break;
        }
        light += 1;
        let _ = d.finished("light", seat, Some(Duration::from_millis(1)));
    }
    assert!((95..=105).contains(&light), "{light} light attempts");
}

#[test]
fn a_tenant_turned_slow_gives_back_what_it_holds_beyond_its_cost() {
    let d = Dispatch::new(2);
    d.push(vec![job("a", 0)]).unwrap();
    let (_, seat) = d.try_next().unwrap().unwrap();
    let short = Some(Duration::from_micros(20));
    assert!(d.finished("a", seat, short).is_empty());
    assert_eq!(d.hold_target(), 2, "nothing here: the slots");
    let unbegun = |n| ClaimedJob {
        begun: false,
        ..job("a", n)
    };
    d.push((1..=300).map(unbegun).collect()).unwrap();
    assert_eq!(d.hold_target(), 1024, "short attempts: 512 a slot");
    assert_eq!(d.caps().of("a"), 1024 - 300);
    let marking = d.to_mark(2);
    assert_eq!(marking.len(), 2);
    // Its attempts turned slow (3 s each, begun jobs claimed at once):
    // one slow end gives nothing back (a stall is not a trend), a dozen
    // hold it to its 2 slots' worth, and it keeps twice that, from the
    // front (the two being marked among them).
    let mut back = Vec::new();
    let mut first_back = None;
    for n in 0..30 {
        d.push(vec![job("a", 1000 + n)]).unwrap();
        let (j, seat) = d.try_next().unwrap().unwrap();
        assert_eq!(j.id, format!("a-{}", 1000 + n), "a begun job goes first");
        let went = d.finished("a", seat, Some(Duration::from_secs(3)));
        if !went.is_empty() && first_back.is_none() {
            first_back = Some(n);
        }
        back.extend(went);
    }
    let first_back = first_back.expect("it gave back");
    assert!(
        (1..=15).contains(&first_back),
        "first gave back after {} slow ends",
        first_back + 1
    );
    assert_eq!(back.len(), 296);
    assert!(back.iter().all(|j| !j.begun));
    assert_eq!(back[0].id, "a-300", "from the back");
    assert_eq!(d.load(), 4);
    assert_eq!(d.caps().of("a"), 0);
    assert_eq!(d.caps().of("stranger"), 2);
    // A mark on its way finds its job gone.
    let more = d.to_mark(8);
    assert_eq!(more.len(), 2, "the rest: a-3 and a-4");
    d.marked(&marking, true);
    d.marked(&more[..1], true);
    d.push((2000..2002).map(|n| job("a", n)).collect()).unwrap();
    let (j, seat) = d.try_next().unwrap().unwrap();
    assert_eq!(j.id, "a-1");
    let went = d.finished("a", seat, Some(Duration::from_secs(3)));
    assert_eq!(went.len(), 1, "keeps 4");
    assert_eq!(went[0].id, "a-4", "the one being marked, at the back");
    d.marked(&more[1..], true);
    assert_eq!(d.begun_waiting(), 4, "a-4's mark came after it went");
    // Begun ones go back too.
    d.push(vec![job("a", 2002), job("a", 2003)]).unwrap();
    let (_, seat) = d.try_next().unwrap().unwrap();
    let went = d.finished("a", seat, Some(Duration::from_secs(3)));
    assert_eq!(went.len(), 1);
    assert!(went[0].begun);
    assert_eq!(d.load(), 4);
    assert_eq!(d.begun_waiting(), 4);
}

#[test]
fn a_short_jobs_cost_that_wavers_gives_nothing_back() {
    let d = Dispatch::new(2);
    d.push(vec![job("a", 0)]).unwrap();
    let (_, seat) = d.try_next().unwrap().unwrap();
    assert!(d
        .finished("a", seat, Some(Duration::from_micros(100)))
        .is_empty());
    let unbegun = |n| ClaimedJob {
        begun: false,
        ..job("a", n)
    };
    d.push((1..=1000).map(unbegun).collect()).unwrap();
    d.push(vec![job("a", 1001)]).unwrap();
    let (_, seat) = d.try_next().unwrap().unwrap();
    // One attempt stalled for 5 ms (a sync, a page fault): the cost is
    // 7 times what it was, and twice its `ahead` is 282, but the 1000
    // held are 0.7 s of runner time: nothing goes back to be claimed
    // again.
    let back = d.finished("a", seat, Some(Duration::from_millis(5)));
    assert!(back.is_empty(), "{} given back", back.len());
    assert_eq!(d.load(), 1000);
}

#[test]
fn a_free_lane_spares_the_guests_a_nudge() {
    let d = Dispatch::with_lane(1);
    d.push(vec![job("a", 0)]).unwrap();
    let _ = d.try_pick(Picker::Lane).unwrap().unwrap();
    // Every slot taken, lane busy: b must start beside a's guest.
    assert_eq!(d.push(vec![job("b", 0)]), Ok(true));
    d.lane_free();
    // The lane is free again: it starts c at once, no guest yields.
    assert_eq!(d.push(vec![job("c", 0)]), Ok(false));
}
