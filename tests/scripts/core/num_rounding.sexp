;; stdout: 2.0 -3.0 3.0 -2.0
;; stdout: 2.0 4.0 -2.0 2.0
;; stdout: 2.0 -2.0
;; stdout: 5 5 -5 5
(prn (floor 2.7) (floor -2.7) (ceiling 2.1) (ceiling -2.1))
(prn (round 2.5) (round 3.5) (round -2.5) (round 2.4))
(prn (truncate 2.7) (truncate -2.7))
(prn (floor 5) (round 5) (ceiling -5) (truncate 5))
