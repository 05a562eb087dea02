"""What the project's commands share (:mod:`.configured`) and ``make run``'s supervisor (:mod:`.together`)."""
