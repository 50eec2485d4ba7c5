"""Word lists that steer name detection: titles, cue phrases, surname endings, and the ordinary
capitalised words that must not be taken for names."""

from __future__ import annotations

from gateway.classify.detectors.name_cues_world import (
    AFTER,
    ATTRIBUTIONS,
    INTRODUCTIONS,
    ROLES,
    SALUTATIONS,
    view_form,
)

# Honorifics directly before a name ("Dr. Berta Szöllössy"); compared lower-case, no dot.
TITLES = frozenset(
    "mr mrs ms miss mx dr prof sir dame madam mme mlle herr frau sra sr srta don dona signor "
    "signora monsieur madame rev fr sgt capt col gen lt cmdr".split()
)

# Lower-case text that, ending right before a capitalised word, introduces a person's name.
CUES_BEFORE: tuple[bytes, ...] = tuple(
    cue.encode()
    for cue in (
        "my name is ", "name is ", "name: ", "name:\n ", "name ", "name? ", "named ",
        "called ", "call me ", "i'm ", "i am ", "said ", "says ", "asked ", "replied ",
        "this is ", "dear ", "hi ", "hello ", "hey ", "thanks, ", "thank you, ", "regards, ",
        "regards,\n ", "sincerely, ", "sincerely,\n ", "cheers, ", "cheers,\n ", "best,\n ",
        "contact ", "ask ", "tell ", "told ", "said to ", "says to ", "married ", "married to ",
        "son of ", "daughter of ", "wife of ", "husband of ", "son ", "daughter ", "wife ",
        "husband ", "brother ", "sister ", "mother ", "father ", "mom ", "dad ", "uncle ",
        "aunt ", "cousin ", "nephew ", "niece ", "grandson ", "granddaughter ", "partner ",
        "boyfriend ", "girlfriend ", "colleague ", "friend ", "neighbour ", "neighbor ",
        "patient ", "client ", "customer ", "employee ", "manager ", "doctor ", "nurse ",
        "author ", "singer ", "songwriter ", "speaker ", "director ", "ceo ", "founder ",
        "attn: ", "attn ", "cc: ", "from: ", "to: ", "signed, ", "signed ", "directed by: ",
        "directed by ", "written by ", "by ", "with ", "under ", "to ", "and ", "of ",
        "meet ", "met ", "call ", "email ", "e-mail ", "phoned ", "visited ", "add ",
        "guardian ", "beneficiary ", "heir ", "kid ", "child ", "baby ", "boss ", "landlord ",
        "tenant ", "teacher ", "student ", "coach ", "roommate ", "producer ", "address: ",
        "commenter ", "reporter ", "journalist ", "writer ", "novelist ", "poet ", "artist ",
        "actor ", "actress ", "player ", "analyst ", "engineer ", "developer ", "lawyer ",
        "attorney ", "officer ", "detective ", "candidate ", "senator ", "councillor ",
        "spokesperson ", "spokesman ", "spokeswoman ", "chairman ", "chairwoman ", "host ",
        "presenter ", "composer ", "drummer ", "guitarist ", "rapper ", "photographer ",
        "address:\n ",
    )
) + tuple(view_form(cue) for cue in (*INTRODUCTIONS, *SALUTATIONS, *ATTRIBUTIONS, *ROLES))
# Cues that only count together with other evidence (they also precede places and firms).
WEAK_CUES: frozenset[bytes] = frozenset(
    cue.encode()
    for cue in ("by ", "with ", "under ", "to ", "and ", "of ", "from: ", "to: ", "add ", "meet ",
                "met ", "call ", "contact ", "ask ", "tell ", "told ", "visited ", "name ",
                "address: ", "address:\n ")
) | frozenset(map(view_form, ATTRIBUTIONS))
# Attribution verbs before a name ("… says Joly."): firms say things too, so medium weight.
MEDIUM_CUES: frozenset[bytes] = frozenset(
    cue.encode() for cue in ("said ", "says ", "asked ", "replied ", "wrote ", "added ")
) | frozenset(map(view_form, SALUTATIONS))
# Words right after a capitalised word that make it a person ("Dori said", "Maslin to Antonio").
CUES_AFTER: tuple[str, ...] = (
    " said", " says", " asked", " asks", " wrote", " writes", " replied", " told", " thinks",
    " gave", " was born", " lives", " lived", " works", " worked", " married", ", who",
    " spent", " went", " came", " began", " joined", " studied", " graduated", " died",
    " believes", " wants", " feels", " loves", " hates", " shouted", " whispered", " smiled",
    " had given", " has given", " is from", ", can ", ", could ", ", would ", ", please",
    ", are you", ", do you", ", did you", ", have you", ", thank",
    " and his wife", " and her husband", "'s wife", "'s husband", "'s kid", "'s child",
    "'s children", "'s family", "'s parents", "'s friend", "'s boss", "'s birthday",
    "'s son", "'s daughter", "'s mother", "'s father", " and his", " and her",
    *AFTER,
)

# Surname endings almost never found on English words: enough on their own.
DISTINCT_SURNAME_ENDINGS: tuple[str, ...] = (
    "ova", "eva", "ovich", "ovna", "evich", "evna", "enko", "chuk", "skiy", "skaya", "ský", "ská",
    "ová", "ovský", "ović", "ević", "vić", "vič", "czyk", "wicz", "sson", "dóttir", "dottir",
    "ström", "qvist", "kvist", "gaard", "escu", "eanu", "opoulos", "akis", "iadis", "oğlu", "oglu",
    "idze", "shvili", "ainen", "lainen", "ucci", "ényi", "ányi", "óczi", "ayev", "iyev",
)
# Endings shared with some words and place names: they only add to other evidence.
SURNAME_ENDINGS: tuple[str, ...] = (
    "ov", "ev", "ski", "ska", "sky", "ić", "ič", "ák", "icz", "sen", "ssen", "son", "berg",
    "oulos", "idis", "ides", "yan", "inen", "nen", "ez", "etti", "ini", "elli", "ardi", "ssy",
    "szy", "mann", "berger", "baum", "stein", "witz",
)

# Endings of English abstract nouns and adjectives that surnames and given names almost never
# have ("Technological Innovation", "Licensing Agreements", "Configurator"): a capitalised word
# of seven letters or more ending so is a term, not a name, unless it is a listed given name.
# Left out on purpose: "-ence"/"-ance" (Lawrence, Frances), "-ers" (Peters), "-ing" (Browning).
TERM_SUFFIXES: tuple[str, ...] = (
    "tion", "tions", "sion", "sions", "ness", "ities", "ility", "ical", "ology", "ologies",
    "ments", "ator", "ators", "izer", "izers", "iser", "isers", "graphic", "istic", "ization",
    "able", "ible", "ous", "ivity", "ware",
)

# Name particles that may sit lower-case inside a full name ("Maika van de Noort").
PARTICLES = frozenset(
    "van von de der den da di del della dos das du le la ter ten bin ibn al".split()
)

# Given names that are also everyday words or places: they need a second cue.
AMBIGUOUS = frozenset(
    """Will May June April August Grace Hope Faith Joy Rose Lily Iris Ivy Daisy Holly Summer
    Autumn Dawn Eve Mark Bill Frank Art Rich Sky Amber Ruby Pearl Crystal Jade Angel Victor
    Jack Chase Hunter Sandy Sunny Rusty Dusty Cliff Dale Glen Glenn Heath Lane Lee Miles Max
    Ray Rod Sue Pat Penny Ginger Olive Jordan Georgia Virginia Florence Paris Austin Dallas
    Sydney Victoria Chelsea Lincoln Milan Berlin Vienna Camden Madison Brooklyn Regina Carolina
    Adelaide Don Bo Can Cem Ali Li Yu Min Jun Ren Sora Yang Lin Ping Jan Dag Per Ola Ole Tor
    Stig Bas Floor Noor Kim Said Mart Rein Sem Tijn Ties Gen Christian Precious Roman Alba
    Aurora Mercedes Ada Julia Siri Alexa Kai Yi Na An Long Van Nam Hai Lan Hong Hua Ning Shan
    Shu Tao Ting Rui Gang Fang Jie Juan Lei Xin Yun Bao Binh Chang Ming Hung Nga Trang Thu
    Quang Tuan Thanh Hoa Hieu Duc Dung Cuong Linh Minh Ngoc Phuong Quynh Thao Viet Xuan Guang
    Liang Qian Xiang Xue Zhang Zhong Chen Hui Jia Jian Jing Lian Ling Mei Qiang Qing Wei Xia
    Xiu Ying Yong Zhen Zhi Hikari Rin Shun Mio Storm River Star Edit""".split()
)

# Capitalised words that start sentences or name things, never people. Compared as written.
COMMON_CAPITALISED = frozenset(
    """The A An This That These Those It Its He She They We You I Me My Our Your Their His Her
    What When Where Why How Which Who Whom Whose If Then Else But And Or Nor So Yet For From To In
    On At By With Without About Above Below After Before During Since Until While Because
    Although Though As Is Are Was Were Be Been Being Do Does Did Done Have Has Had Can Could
    Would Should Shall May Might Must Will Not No Yes Ok Okay Please Thanks Thank Hello Hi Hey
    Dear All Any Some Each Every Both Either Neither One Two Three Four Five Six Seven Eight Nine
    Ten First Second Third Last Next Previous New Old Other Another Many Much More Most Few Less
    Here There Now Today Tomorrow Yesterday Also Just Only Even Still Again Very Really Maybe
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March July
    September October November December Mon Tue Wed Thu Fri Sat Sun Jan Feb Mar Apr Jun Jul Aug
    Sep Sept Oct Nov Dec God Devil Lord Christ Jesus Bible Sir Madam Mister Mrs Mr Ms Dr
    Street Road Avenue Lane Drive Suite Apt Unit Box North South East West Central Upper Lower
    University College School Institute Hospital Clinic Company Corporation Inc Ltd Llc Group
    Bank Department Ministry Office Council Committee Association Foundation Society Club Team
    Project Program Programme Service Services System Systems Data Report Question Answer Note
    Example Figure Table Chapter Section Part Page Step Problem Solution Option Options Case Type
    Name Address Phone Email Mobile Desk Fax Website Date Time Title Subject Summary Description
    Personal Info Information Account Card Number Code Key Token Password User Customer Client
    Patient Doctor Nurse Manager Director President King Queen Prince Princess Emperor Pope Saint
    Captain General Professor Judge Senator Governor Minister Chief Officer Agent Bot Assistant
    Wisdom Discipline Love Truth Justice Freedom Peace War History Science Nature Art Music
    English French German Spanish Italian Russian Chinese Japanese American British European
    African Asian Christian Muslim Jewish Catholic Protestant Internet Python Java Linux Windows
    Apple Google Microsoft Amazon Facebook Twitter Docker Kubernetes Excel Word Json Api Http
    Url Sql Html Css Javascript Typescript True False None Null Error Exception Warning Debug
    Info Hot Cold Red Blue Green Black White Gold Silver Great Good Bad Big Small Long Short High
    Low Full Free Open Close Start End Stop Begin Finish Read Write Create Update Delete Add
    Remove Find Search Get Set Send Call Check Choose Select Let Make Take Give Use Try Run Help
    Find Keep Show Tell Ask Look See Write Explain Describe Consider Suppose Assume Given Calculate
    Compute Determine Identify Evaluate Which Whereas Therefore However Moreover Furthermore
    Additionally Finally Firstly Secondly Overall Meanwhile Otherwise Indeed Instead Unlike
    Like Among Between Within Across Along Around Against Toward Towards Upon Via Per Into Onto
    Billing Shipping Mailing Home Work Office Fax Tel Directed Written Produced Edited Published
    Action Adventure Animation Comedy Drama Horror Mystery Thriller Romance Kids Family Suspense
    Entertainment Weekly Daily Times News Journal Review Magazine Post Tribune Herald Person
    Persons Reason Reasons Season Seasons Lesson Lessons Poison Prison Comparison Crimson Treason
    Venison Unison Garrison Amen Seven Heaven Eleven Chosen Linen Listen Often Women Children
    Scenario Statement Line Lines Version Level Round Phase Stage Item Items Grade Class Unit
    Room Floor Exhibit Appendix Article Clause Rule Volume Vol Issue Episode Season Week Day
    Month Year Hour Minute Minutes Hours Days Years Player Level Test Exam Lesson Module
    Producer Senator Professor Director Detective Singer Songwriter Author Writer Reporter
    Journalist Commenter Actor Actress Chairman Chairwoman Founder Engineer Analyst Attorney
    Councillor Congressman Congresswoman Governor Mayor Sheriff Inspector Sergeant Lieutenant
    Colonel Corporal Private Pastor Reverend Father Sister Brother Uncle Aunt Grandma
    Grandpa""".split()
)

# Words that end a name and start something else ("… Street", "… Inc").
NAME_BREAKERS = frozenset(
    """Street St Road Rd Avenue Ave Lane Ln Drive Dr Boulevard Blvd Court Ct Place Square Way
    Parks Terrace Close Crescent Gardens Bridge River Lake Mountain Bay Beach City
    Town Village County State Province Island Islands Inc Ltd Llc Corp Co Company Group Bank
    University College School Institute Hospital Foundation Association Museum Church Hotel
    Restaurant Cafe Airport Station Center Centre Orchestra Band Records Streets Investments
    Technologies Technology Research Associates Analytics Solutions Partners Consulting Holdings
    Capital Labs Media Studios Union Harbor Harbour Turnpike Greens Rapids Bypass Radial Republic
    Kingdom States Highway Freeway Expressway Pass Mill Mills Cove Coves Courts Fort Port Point
    Plaza Row Walk Alley Path Trail Heights Ridge Valley Creek Springs Falls Meadows Estates
    Manor Crossing Junction Loop Circle Parkway Pike View Vista Shore Shores Isle
    Grove Forest Rua Rue Via Viale Avenida Av Paseo Calle Carrer Strada Piazza Corso Vicolo
    Largo Travessa Praça Chemin Allee Straße Strasse Weg Gasse Platz Vej Gade Gata Gatan Katu Tie
    Utca Ulica Trg Systems Software Networks Industries Enterprises Agency Services Motors
    Airlines Pharmaceuticals Insurance Energy Foods Brands Markets Realty Properties
    Empire Dynasty Federation Commonwealth Gulf Strait Straits Sea Ocean Channel Peninsula
    Desert Canyon Glacier""".split()
)

# Given names that, written lower-case, are far more often words ("gene expression", "de
# jure", "drew a line", "graham crackers"). A capital-free line is not re-read for them, and
# they stay lower-case when it is. From general knowledge, plus the given names found
# lower-case at least twice in the MMLU and GSM8K prompts (../shared/data/routing).
LOWER_CASE_WORDS = frozenset(
    """gene mere unto charity jure drew dean clay tore maxim till rim hazel tuba marina eddy ed
    della wit teddy edit alexia rami graham madeleine jean bob sue pat rob bill rusty sandy jack
    nick mike grant norm art chip lance pierce reed wade ward carol iris ivy ruby pearl dawn
    faith hope joy grace rose lily violet daisy holly heather fern rosemary basil sage jasmine
    amber crystal jade summer autumn april june august may will mark frank victor earl duke
    prince king guy rex max ray penny ginger olive angel destiny harmony melody patience
    prudence constance felicity trinity chance hunter chase cliff dale glen heath lane miles rod
    don dick harry jimmy jerry tommy bobby betty patty sunny buck colt cole drake rocky stone
    sterling gale myrtle opal fanny ebony misty brandy candy cherry honey precious carmen
    florence georgia virginia austin dallas sydney victoria chelsea lincoln orlando regina
    madison brooklyn jordan tyler mason carter cooper parker porter fisher baker taylor
    christian sonny ken liberty wolfram""".split()
)
