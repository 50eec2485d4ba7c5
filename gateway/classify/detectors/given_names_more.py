"""More given names (a second batch, same sources and rules as given_names.py), kept in
their own module to keep each list file small."""

from __future__ import annotations

_MORE = """
Abe Ada Addison Adele Agatha Alana Alastair Alberta Alden Alec Alfie Alva Alvin Amos Andre Andy
Angelo Angie Annabel Annabelle Annette Archie Ariana Arianna Arlene Arnold Ashlyn Aubrey Barney
Bart Basil Ben Benny Bernice Bert Bessie Bianca Blair Bob Brad Brady Brenna Brent Brianna Bridget
Brooks Bryce Byron Calvin Candace Carlton Carmen Cassandra Cassidy Cecilia Cedric Celeste Chad
Charity Chester Chuck Clay Clayton Cole Colleen Conrad Cora Corey Courtney Curtis Cyril Daisy
Damian Damon Dana Daphne Darcy Darius Darla Darrell Dave Dawson Delia Della Derrick Dexter Dianne
Dolly Dominique Donovan Dora Doug Drew Duane Dustin Dwayne Dwight Earl Ed Eddie Edgar Edmund
Eliza Ella Ellie Elliott Eloise Elsie Elton Elvis Emmett Enid Ernest Esther Ethel Eunice Everett
Ezra Fay Felicia Floyd Forrest Francine Freddie Freya Gabrielle Gail Garrett Gene Genevieve Gerry
Gilbert Gina Gladys Greg Greta Gwen Gwendolyn Hal Hank Harlan Harvey Hazel Hector Heidi Herman
Hilda Homer Horace Hubert Ida Irene Irma Irving Isaiah Ivan Jacqueline Jaime Jan Janie Jay
Jeanette Jeanne Jed Jeff Jenna Jerome Jess Jim Jimmy Joanne Jody Joey Johanna Jon Josephine Josie
Juanita Jules Julius June Karl Kathy Katrina Kay Kendall Kent Kerry Kirby Kris Lance Lana Laurel
Laverne Leila Lena Leo Leon Leroy Lester Lila Lillie Lindsey Lionel Lloyd Lola Lonnie Loretta
Lorenzo Lou Lucia Lucille Luther Lyle Mabel Mack Mae Maggie Mandy Marcia Margo Marjorie Marlon
Marsha Marvin Matilda Mattie Maureen Maurice Mavis Maxine Melvin Merle Mia Mickey Mike Milo Milton
Mindy Minnie Miriam Misty Mona Morgan Morris Muriel Myra Myrtle Nadia Nat Ned Nell Nellie Nick
Noel Nolan Norma Odessa Ollie Opal Otis Patsy Patty Pearl Perry Pete Polly Quincy Rachael
Ramona Reginald Rex Rhonda Ricky Rita Roberto Rochelle Rodger Roland Ron Ronnie Rosa Rosalie
Roxanne Rudolph Rufus Russ Sadie Sally Sam Sammy Shannon Sheldon Sherman Sid Silas Simone Sonia
Stacey Stella Steve Stuart Sybil Sylvester Sylvia Ted Teddy Terence Terrence Thelma Theo Tom
Tommy Toni Tony Tracey Troy Trudy Ulysses Ursula Vance Vaughn Velma Vera Vern Vernon Veronica
Vicky Viola Wade Wallace Walt Warren Wilbur Wilma Winifred Winston Yolanda Zack Zachariah Zelda
Aleksa Alois Anatol Anneliese Anselm Arvo Benedikt Bertil Birte Clemens Cornelia
Detlev Egil Eleonora Elmar Elsa Emilie Erna Ernesto Esben Fabienne Ferdinand Filip Filippa
Frederik Friedhelm Gerlinde Gertraud Gunilla Gustavo Hedwig Hennie Hilmar Ilona Ines Ingmar Ivar
Jarl Joakim Jonna Jorma Kai Kaisa Karla Kaspar Kirsti Knud Lasse Lennart Liesel Linus Lorenz
Lucas Ludmilla Lukas Malte Marek Margit Marius Maxi Meike Merete Mikko Mirko Moritz Nadja Nils
Oda Ottilie Pekka Piet Reidar Reinhold Rikard Roar Rolf Roswitha Saara Severin Stina Svea
Sölvi Tarja Theresa Thekla Tilda Tilman Torben Trude Ulf Valdemar Valter Verena Vilja Vilma
Wendelin Wilfried Wiebke Yngve Åse Ørjan Øystein Agustina Alonso Amparo Anabel Araceli Armando
Arturo Aurelio Bartolomé Bautista Benjamín Candela Cayetano Clemente Consuelo Cristóbal Damián
Emiliano Encarnación Ernesto Esperanza Estela Eugenia Ezequiel Facundo Felicidad Fermín Gerardo
Gregorio Hernán Hilario Horacio Humberto Inmaculada Isidro Jacinto Jaime Joaquina Julián Lautaro
Leonor Lourdes Macarena Marcelino Maximiliano Mirta Nicanor Norberto Octavio Osvaldo Paloma
Perla Ramiro Ramón Reinaldo Remedios Renata Rogelio Rubén Sancho Santino Silvestre Tadeo
Teodoro Valentín Vanesa Wenceslao Adalberto Ambrogio Angela Annunziata Benedetto Carmela Cesare
Cosimo Donato Edoardo Elisabetta Emanuele Fiorella Gennaro Gerardo Giancarlo Gino Giuliana
Graziella Guido Ignazio Lucrezia Ludovica Marcello Marisa Mattia Nicoletta Ornella Raffaella
Renato Rosalia Sergio Severino Teodoro Valerio Arvid Arnav Alisha Anushka Aryan Dhruv Gita
Harsha Indira Jaya Kamala Karan Kumar Lata Madhu Mahesh Mira Nandini Parth Preeti Rekha Ritu
Sachin Seema Shanti Shiva Sita Sonia Uma Usha Yash Ayumi Chihiro Eiji Fumiko Goro Hana Hideo
Isamu Jiro Kazuko Kenichi Kiyoshi Michiko Mitsuko Nobuko Ryuji Saburo Sachiko Setsuko Shigeru
Shizuka Sumiko Tetsuya Yoko Yoshiko Yoshio Yuji Yusuke Emeka Ifeoma Kelechi Nneka Oluwadamilare
Tunde Yetunde Adebayo Folake Afua Akua Ama Esi Kojo Kwaku Yaw Wanjiru Wambui Njeri Kamau Otieno
Achieng Farid Faisal Ghada Habib Hadi Hana Hanan Ismail Jamila Kareem Khadija Latifa Malik Maryam
Mona Nabil Nasser Noura Rami Reem Saad Samira Sara Walid Yasmine Yousef Zahra Ziad Dmitrij
Aleksey Anatoliy Arkadiy Bogdana Borislav Daniil Darina Evgenia Gleb Kseniya Lev Lidia Liliya
Matvei Miroslava Nadia Radomir Rostislav Stepan Taras Tamara Vasilisa Veronika Vsevolod Yegor
Zlata Zhanna Artem Artyom Lyubov Milana Nazar Oles Ostap Petro Roksolana Sofiya Vasyl Yevhen
"""

_WIDER = """
Aiden Ainsley Aisling Alfie Amos Anders Ansel Aoife Arlo Asher Aurelia Axel Bella Benedict Bethan
Bram Bronwen Caoimhe Carys Cathal Ciara Ciaran Cillian Clodagh Conor Cormac Dafydd Deirdre Donal
Dylan Eimear Eoin Eva Fintan Gethin Grainne Iestyn Kieran Llewellyn Mairead Meghan Niall Oisin
Padraig Rhiannon Ronan Sinead Tadhg Tegan Aled Bryn Cerys Dewi Elin Emrys Gwyneth Ifan Owain
Angharad Alasdair Ailsa Calum Catriona Eilidh Euan Fraser Iain Innes Kirsteen Murdo Rona Ruaridh
Adalbert Alwin Annegret Bernhard Berthold Burkhard Eckhard Ekkehard Elmar Engelbert Erhard Frauke
Gerd Gerlinde Gisbert Gunther Hannes Hansjörg Heiner Heino Helge Hinrich Ingolf Irmtraud Jochen
Kai Karsten Kunibert Leopold Liesl Lorenz Malte Marlies Meinhard Mechthild Nils Ortwin Rüdiger
Sieglinde Sybille Theo Thilo Till Traudl Uli Ulrich Volkmar Wilfried Winfried Wolfram
Annelies Bep Cornelis Dirkje Evert Frits Gerard Gerrit Guus Hein Jacoba Jannes Joep Klaas Lodewijk
Marinus Mees Nelleke Rien Sietse Teun Tjeerd Wessel Wietske Aart Anneke Bart Dieuwke Douwe Gijs
Aksel Alvar Asger Bendt Bodil Carsten Ditte Eskil Folke Frej Gorm Halfdan Holger Ivar Jannik Jens
Kasper Kjeld Lauge Malthe Mogens Njål Oddvar Ragna Runa Sune Svend Sølve Tage Thyra Torsten Tove
Troels Unni Valborg Vigdis Yrsa Synnøve Torunn Gro Liv Kjersti Turid Eldbjørg Brynhild
Aapo Eelis Elmeri Hilkka Ismo Jaana Kaisu Kyösti Marketta Oiva Orvokki Raija Reijo Sakari
Saija Sulo Taisto Tellervo Toivo Urho Vilho Voitto Hannele Helka Inkeri Irja Jorma Kalle Maarit
Bogusława Czesława Dobromir Genowefa Gabriela Helena Hieronim Ignacy Jadwiga Jarek
Lech Leokadia Mieczysław Mikołaj Miłosz Nikodem Przemek Rozalia Stanisława Tymon Wacław Wit
Zdzisława Zenon Zygmunt Bohdan Borys Dobrosław Halyna Ivanna Kateryna Lesya Mykola Myroslav
Oleksandr Oleksiy Orest Sviatoslav Volodymyr Yaryna Zoriana Anatolij Blažena Bořivoj Čeněk Dana
Drahomíra Jaromír Jindřich Kamila Květa Ludvík Marie Milada Miloš Oldřich Přemysl Radim Soňa
Svatopluk Vít Zbyněk Zora Branislav Darko Dejan Đorđe Ljubica Milica Miodrag Momčilo Nebojša
Radovan Ratko Slobodan Vesna Vuk Zlatko Ante Ankica Božidar Damir Davor Dubravka Hrvoje Ivica
Kruno Ljiljana Mladen Tihomir Vlatko Zvonimir Aljaž Bojan Gregor Janez Jure Mojca Nejc Primož
Rok Tadej Urška Žiga Blaž Boštjan Andraž Vanja Tina Spela Iztok Luka Nuša
Aladár Árpád Bálint Benedek Bernadett Brigitta Csongor Dezső Dorina Ernő Etelka Gusztáv Győző
Ignác Irén Jenő Jolán Kristóf Lőrinc Magdolna Margit Mátyás Nóra Ödön Olivér Pálma Rezső Szilárd
Tivadar Vilma Zalán Zsigmond Zsuzsa
Agapi Anthi Aristotelis Artemis Charalambos Chrysanthi Dionysios Efstathios Evdokia Fotis
Grigorios Ilias Kalliopi Kleopatra Lambros Leonidas Loukas Marios Olympia Pantelis Periklis
Petros Sotiris Stamatis Stylianos Thalia Triantafyllos Vangelis Xanthi Zacharias Zoe
Abril Ainhoa Aitana Amaia Anselmo Aránzazu Asier Begoña Candelaria Cayetana Eneko Estíbaliz
Gorka Iker Iñaki Itziar Jon Josu Leire Maider Mikel Nerea Oihane Unai Xabier Zuriñe Adela
Agustina Aitor Amalia Baltasar Benigno Casimiro Custodio Dionisio Eloísa Eusebio Faustino Fidel
Florentino Gervasio Godofredo Inocencio Jacinta Leocadia Lorenza Lucas Marcial Maximino Nieves
Obdulia Olegario Paulino Plácido Prudencio Remedios Saturnino Severo Teófilo Venancio Zacarías
Alcides Alvim Anísio Ariana Bento Caio Cauã Custódio Davi Dinis Elói Enzo Fagundes Filipa Gilberto
Heitor Iara Isadora Jaqueline Jussara Leonardo Lorena Maurício Miguel Natália Nuno Olívia Rodrigo
Simão Teodoro Tiago Ulisses Valdemar Vasco Wagner Yara Zeferino Zélia Tomé Mafalda Inês
Anne-Marie Aurore Bérénice Blandine Brune Capucine Cédric Cyprien Edmond Eugène Fernand Firmin
Gaston Géraldine Ghislaine Gisèle Gwenaël Honoré Huguette Irène Josiane Jules Léandre Léopold
Lionel Lucienne Marceau Marius Mélanie Murielle Nadège Odile Perrine Roland Rosalie Sidonie
Sylvain Timothée Ursule Valentin Yannick Yolande
Adelmo Agnese Aldo Amedeo Annalisa Arnaldo Bianca Carla Cinzia Corrado Cristiano Daniele Dario
Emanuela Ernesto Fabrizio Fiorenza Flavio Franca Gabriele Germana Gianfranco Gilda Ginevra Ivo
Letizia Liliana Lucio Luigi Marcella Mariella Marina Michela Mirko Nadia Nino Noemi Osvaldo
Patrizia Pierluigi Pina Rebecca Rolando Romano Rosalba Sabina Santo Saverio Sergio Teresa Tullio
Ugo Valeria Veronica Viola Vittorio Zeno
Ahmet Alper Arda Aslı Aysel Bahar Barış Berk Betül Bülent Cansu Derya Doğan Ece Eda Engin Erkan
Ferhat Gizem Gökhan Gül Gülsüm İbrahim İlker Kaan Kerem Levent Melek Merve Onur Pınar Seda Sena
Serdar Sevgi Şule Tolga Tuncay Uğur Yasemin Yiğit Zafer
Abdel Abdulaziz Adel Adnan Afaf Ahlam Alaa Amal Anas Asma Ayman Bassam Bilal Dalia Dina Fadi
Fares Firas Hala Hamid Haneen Hatem Hiba Houda Iman Issa Jawad Kamal Karima Khaled Lina Lubna
Majid Marwan Mounir Nadim Nawal Nizar Omar Osama Qasim Rafiq Rana Reda Rim Salah Salim Sana Sawsan
Shadi Suha Tamer Wafa Yasser Younes Zakaria Ziyad
Abhishek Ajay Alok Amitabh Anand Ankit Anupam Aparna Ashok Bhavna Chetan Dinesh Farhan Ganesh
Girish Hemant Jagdish Jyoti Kailash Kamal Kunal Lalit Mahendra Manoj Mukesh Naresh Neeraj Nitin
Pankaj Prakash Pranav Rakesh Rekha Sachin Sameer Santosh Saurabh Shalini Shweta Siddharth Sonal
Sunita Swati Tarun Umesh Vandana Vinod Yogesh
Akihiro Ayane Chie Daiki Eri Fumiya Hajime Haruki Hayato Hikari Hiroki Itsuki Junichi Kana Kaoru
Kenjiro Kohei Kotaro Mai Masato Mio Miyu Momoko Nanami Natsuki Rin Ryosuke Saki Shun Sota Takuya
Tatsuya Tomoya Yuna Yusei Yuta Yuya
Bo-ra Da-eun Do-yoon Ha-eun Hyun-woo Ji-ho Ji-min Ji-yeon Joon-ho Min-seo Seo-jun Soo-ah Yoo-jin
An Bao Binh Cuong Dung Duc Hai Hanh Hieu Hoa Hung Huong Khanh Lan Linh Long Minh Nam Nga Ngoc
Phuong Quang Quynh Thanh Thao Thu Trang Trung Tuan Tuyet Van Viet Xuan
Chang Fang Gang Guang Hong Hua Jie Juan Kai Lei Liang Ming Na Ning Qian Rui Shan Shu Tao Ting
Xiang Xin Xue Yi Yun Zhang Zhong
Abdou Adama Aminata Awa Babacar Bintou Cheikh Coumba Demba Fatou Ibrahima Kadiatou Mamadou
Moussa Ousmane Sekou Seydou Souleymane Aliyu Bola Chiamaka Ebere Funmilayo Ikechukwu Kayode
Nkechi Oluwatobi Temitope Uchenna Akosua Abena Kwesi Nana Ekow Baraka Imani Juma Neema Rehema
Zawadi Lerato Lindiwe Mpho Nandi Sibusiso Thandeka Thulani Xolani Zodwa
Aroha Kiri Mere Nikau Tane Wiremu Moana Leilani Kalani Keoni
"""

MORE_GIVEN_NAMES: frozenset[str] = frozenset((_MORE + _WIDER).split())
